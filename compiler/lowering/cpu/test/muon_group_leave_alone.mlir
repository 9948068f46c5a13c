// muon_updates of one shape that must keep their own launches (muon_group_fusion.h), each
// shape of it: moved to the first one's place, or run at once with it, the later update
// would read or write bytes differently from the per-op order.
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers="alignment=64" --gpt-lower-to-cpu 2>/dev/null | FileCheck %s

// The second update's gradient is computed after the first update (the data-parallel step's
// all_reduce right before each update has this shape): it does not exist at the first's place.
// CHECK-LABEL: func.func @operand_after_first
// CHECK: gpt.call_builtin "cpu.muon.f32"({{.*}}, %arg0, %arg2, %arg4,
// CHECK: gpt.call_builtin "cpu.mul.f32"
// CHECK: gpt.call_builtin "cpu.muon.f32"({{.*}}, %arg1, %{{[^,]+}}, %arg5,
// CHECK-NOT: muon_group
func.func @operand_after_first(
    %p0: tensor<8x8xf32> {gpt.name = "p0"}, %p1: tensor<8x8xf32> {gpt.name = "p1"},
    %g0: tensor<8x8xf32> {gpt.name = "g0"}, %g1: tensor<8x8xf32> {gpt.name = "g1"},
    %b0: tensor<8x8xf32> {gpt.name = "b0"}, %b1: tensor<8x8xf32> {gpt.name = "b1"},
    %lr: tensor<f32> {gpt.name = "lr"})
    -> (tensor<8x8xf32> {gpt.name = "p0"}, tensor<8x8xf32> {gpt.name = "p1"},
        tensor<8x8xf32> {gpt.name = "b0"}, tensor<8x8xf32> {gpt.name = "b1"}) {
  %q0, %c0 = gpt.muon_update %p0, %g0, %b0, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  %h1 = gpt.mul %g1, %g1 : tensor<8x8xf32>, tensor<8x8xf32>
  %q1, %c1 = gpt.muon_update %p1, %h1, %b1, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  return %q0, %q1, %c0, %c1 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// The first update reads p1 (as its gradient) and the second writes p1 in place: at once,
// the second would change what the first reads.
// CHECK-LABEL: func.func @one_writes_what_another_reads
// CHECK: gpt.call_builtin "cpu.muon.f32"({{.*}}, %arg0, %arg1, %arg2,
// CHECK: gpt.call_builtin "cpu.muon.f32"({{.*}}, %arg1, %arg3, %arg4, %{{.*}}, %arg1, %arg4)
// CHECK-NOT: muon_group
func.func @one_writes_what_another_reads(
    %p0: tensor<8x8xf32> {gpt.name = "p0"}, %p1: tensor<8x8xf32> {gpt.name = "p1"},
    %b0: tensor<8x8xf32> {gpt.name = "b0"}, %g1: tensor<8x8xf32> {gpt.name = "g1"},
    %b1: tensor<8x8xf32> {gpt.name = "b1"}, %lr: tensor<f32> {gpt.name = "lr"})
    -> (tensor<8x8xf32> {gpt.name = "p0"}, tensor<8x8xf32> {gpt.name = "p1"},
        tensor<8x8xf32> {gpt.name = "b0"}, tensor<8x8xf32> {gpt.name = "b1"}) {
  %q0, %c0 = gpt.muon_update %p0, %p1, %b0, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  %q1, %c1 = gpt.muon_update %p1, %g1, %b1, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  return %q0, %q1, %c0, %c1 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// An op between them reads p1, which the second update writes in place: run at the first's
// place, the update would come before that read.
// CHECK-LABEL: func.func @read_between
// CHECK: gpt.call_builtin "cpu.muon.f32"
// CHECK: gpt.call_builtin "cpu.add.f32"({{.*}}, %arg1, %arg1,
// CHECK: gpt.call_builtin "cpu.muon.f32"({{.*}}, %arg1, %arg3, %arg5, %{{.*}}, %arg1, %arg5)
// CHECK-NOT: muon_group
func.func @read_between(
    %p0: tensor<8x8xf32> {gpt.name = "p0"}, %p1: tensor<8x8xf32> {gpt.name = "p1"},
    %g0: tensor<8x8xf32> {gpt.name = "g0"}, %g1: tensor<8x8xf32> {gpt.name = "g1"},
    %b0: tensor<8x8xf32> {gpt.name = "b0"}, %b1: tensor<8x8xf32> {gpt.name = "b1"},
    %lr: tensor<f32> {gpt.name = "lr"})
    -> (tensor<8x8xf32> {gpt.name = "p0"}, tensor<8x8xf32> {gpt.name = "p1"},
        tensor<8x8xf32> {gpt.name = "b0"}, tensor<8x8xf32> {gpt.name = "b1"}, tensor<8x8xf32> {gpt.name = "twice"}) {
  %q0, %c0 = gpt.muon_update %p0, %g0, %b0, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  %twice = gpt.add %p1, %p1 : tensor<8x8xf32>, tensor<8x8xf32>
  %q1, %c1 = gpt.muon_update %p1, %g1, %b1, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  return %q0, %q1, %c0, %c1, %twice : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Another momentum: the launch takes one for the whole group.
// CHECK-LABEL: func.func @other_momentum
// CHECK: gpt.call_builtin "cpu.muon.f32"
// CHECK: gpt.call_builtin "cpu.muon.f32"
// CHECK-NOT: muon_group
func.func @other_momentum(
    %p0: tensor<8x8xf32> {gpt.name = "p0"}, %p1: tensor<8x8xf32> {gpt.name = "p1"},
    %g0: tensor<8x8xf32> {gpt.name = "g0"}, %g1: tensor<8x8xf32> {gpt.name = "g1"},
    %b0: tensor<8x8xf32> {gpt.name = "b0"}, %b1: tensor<8x8xf32> {gpt.name = "b1"},
    %lr: tensor<f32> {gpt.name = "lr"})
    -> (tensor<8x8xf32> {gpt.name = "p0"}, tensor<8x8xf32> {gpt.name = "p1"},
        tensor<8x8xf32> {gpt.name = "b0"}, tensor<8x8xf32> {gpt.name = "b1"}) {
  %q0, %c0 = gpt.muon_update %p0, %g0, %b0, %lr : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  %q1, %c1 = gpt.muon_update %p1, %g1, %b1, %lr {momentum = 0.9 : f64}
      : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  return %q0, %q1, %c0, %c1 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
