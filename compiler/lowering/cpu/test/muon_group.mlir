// An entry point's muon_updates of one shape are one launch, muon_group (muon_group_bf16
// under bf16 autocast), at the first one's place: count, rows, cols, momentum, then param,
// grad, momentum_buffer, lr, new_param, new_momentum_buffer of each in block order; the
// updates of another shape between them stay where they are (touching none of their bytes:
// each argument is its own slot). A lone update keeps its muon launch.
// muon_group_leave_alone.mlir: the updates that must keep their own launches.
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers="alignment=64" --gpt-lower-to-cpu 2>/dev/null | FileCheck %s

// CHECK-LABEL: func.func @optimizer
// CHECK: %[[THREE:.*]] = arith.constant 3 : i64
// CHECK: gpt.call_builtin "cpu.muon_group.f32"(%[[THREE]], %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg6, %arg12, %[[LR:[^,]*]], %arg0, %arg12, %arg2, %arg8, %arg14, %[[LR]], %arg2, %arg14, %arg4, %arg10, %arg16, %[[LR]], %arg4, %arg16) {gpt.op = "gpt.muon_update"}
// CHECK: %[[TWO:.*]] = arith.constant 2 : i64
// CHECK: gpt.call_builtin "cpu.muon_group.f32"(%[[TWO]], %{{.*}}, %{{.*}}, %{{.*}}, %arg1, %arg7, %arg13, %[[LR]], %arg1, %arg13, %arg3, %arg9, %arg15, %[[LR]], %arg3, %arg15) {gpt.op = "gpt.muon_update"}
// CHECK: gpt.call_builtin "cpu.muon.f32"({{.*}}, %arg5, %arg11, %arg17, %[[LR]], %arg5, %arg17) {gpt.op = "gpt.muon_update"}
// CHECK-NOT: gpt.call_builtin
// CHECK: return
func.func @optimizer(
    %p0: tensor<8x8xf32> {gpt.name = "p0"}, %p1: tensor<16x8xf32> {gpt.name = "p1"},
    %p2: tensor<8x8xf32> {gpt.name = "p2"}, %p3: tensor<16x8xf32> {gpt.name = "p3"},
    %p4: tensor<8x8xf32> {gpt.name = "p4"}, %p5: tensor<8x16xf32> {gpt.name = "p5"},
    %g0: tensor<8x8xf32> {gpt.name = "g0"}, %g1: tensor<16x8xf32> {gpt.name = "g1"},
    %g2: tensor<8x8xf32> {gpt.name = "g2"}, %g3: tensor<16x8xf32> {gpt.name = "g3"},
    %g4: tensor<8x8xf32> {gpt.name = "g4"}, %g5: tensor<8x16xf32> {gpt.name = "g5"},
    %b0: tensor<8x8xf32> {gpt.name = "b0"}, %b1: tensor<16x8xf32> {gpt.name = "b1"},
    %b2: tensor<8x8xf32> {gpt.name = "b2"}, %b3: tensor<16x8xf32> {gpt.name = "b3"},
    %b4: tensor<8x8xf32> {gpt.name = "b4"}, %b5: tensor<8x16xf32> {gpt.name = "b5"},
    %m: tensor<f32> {gpt.name = "lr_multiplier"})
    -> (tensor<8x8xf32> {gpt.name = "p0"}, tensor<16x8xf32> {gpt.name = "p1"}, tensor<8x8xf32> {gpt.name = "p2"},
        tensor<16x8xf32> {gpt.name = "p3"}, tensor<8x8xf32> {gpt.name = "p4"}, tensor<8x16xf32> {gpt.name = "p5"},
        tensor<8x8xf32> {gpt.name = "b0"}, tensor<16x8xf32> {gpt.name = "b1"}, tensor<8x8xf32> {gpt.name = "b2"},
        tensor<16x8xf32> {gpt.name = "b3"}, tensor<8x8xf32> {gpt.name = "b4"}, tensor<8x16xf32> {gpt.name = "b5"}) {
  %base = arith.constant dense<0.02> : tensor<f32>
  %lr = gpt.mul %m, %base : tensor<f32>, tensor<f32>
  %q0, %c0 = gpt.muon_update %p0, %g0, %b0, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  %q1, %c1 = gpt.muon_update %p1, %g1, %b1, %lr : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<f32>
  %q2, %c2 = gpt.muon_update %p2, %g2, %b2, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  %q3, %c3 = gpt.muon_update %p3, %g3, %b3, %lr : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<f32>
  %q4, %c4 = gpt.muon_update %p4, %g4, %b4, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  %q5, %c5 = gpt.muon_update %p5, %g5, %b5, %lr : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<f32>
  return %q0, %q1, %q2, %q3, %q4, %q5, %c0, %c1, %c2, %c3, %c4, %c5
      : tensor<8x8xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<8x16xf32>,
        tensor<8x8xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<8x16xf32>
}

// -----

// Under bf16 autocast the group orthogonalises in bf16, as each update alone does (muon_bf16).
// CHECK-LABEL: func.func @optimizer_bf16
// CHECK: gpt.call_builtin "cpu.muon_group_bf16.f32"({{.*}}, %arg0, %arg2, %arg4, %[[LR:[^,]*]], %arg0, %arg4, %arg1, %arg3, %arg5, %[[LR]], %arg1, %arg5) {gpt.op = "gpt.muon_update"}
// CHECK-NOT: gpt.call_builtin
// CHECK: return
module attributes {gpt.autocast = "bf16"} {
  func.func @optimizer_bf16(
      %p0: tensor<8x8xf32> {gpt.name = "p0"}, %p1: tensor<8x8xf32> {gpt.name = "p1"},
      %g0: tensor<8x8xf32> {gpt.name = "g0"}, %g1: tensor<8x8xf32> {gpt.name = "g1"},
      %b0: tensor<8x8xf32> {gpt.name = "b0"}, %b1: tensor<8x8xf32> {gpt.name = "b1"},
      %lr: tensor<f32> {gpt.name = "lr"})
      -> (tensor<8x8xf32> {gpt.name = "p0"}, tensor<8x8xf32> {gpt.name = "p1"},
          tensor<8x8xf32> {gpt.name = "b0"}, tensor<8x8xf32> {gpt.name = "b1"}) {
    %q0, %c0 = gpt.muon_update %p0, %g0, %b0, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
    %q1, %c1 = gpt.muon_update %p1, %g1, %b1, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
    return %q0, %q1, %c0, %c1 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}
