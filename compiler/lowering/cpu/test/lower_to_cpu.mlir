// gpt-lower-to-cpu: a planned entry point becomes its launch schedule for the cpu driver:
// every op a gpt.call_builtin of the driver's library kernel (runtime/device/cpu/BUILTINS.md:
// "cpu.<op>.<f32|f64>", dims and attributes as scalars first, then the buffers), every value a
// view of the arena at its planned offset, a result named like an argument copied home.
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers="alignment=64" --gpt-lower-to-cpu 2>/dev/null | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[T:[a-z0-9]+]]: memref<8xi32> {gpt.name = "targets", gpt.valid_range = array<i64: -1, 32>}
// CHECK-SAME: %[[ACC:[a-z0-9]+]]: memref<8x32xf32> {gpt.name = "acc"}, %[[ARENA:[a-z0-9]+]]: memref<?xi8> {gpt.arena}
// CHECK: gpt.call_builtin "cpu.rms_norm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %arg0, %{{.*}}) {gpt.op = "gpt.rms_norm"} : i64, i64, f64, memref<8x64xf32>, memref<8x64xf32>
// CHECK: %[[Y:.*]] = memref.view %[[ARENA]]
// CHECK: gpt.call_builtin "cpu.matmul.f32"({{.*}}, %[[Y]]) {gpt.op = "gpt.matmul"} : i64, i64, i64, memref<8x64xf32>, memref<32x64xf32>, memref<8x32xf32>
// CHECK: gpt.call_builtin "cpu.softcap.f32"({{.*}}) {gpt.op = "gpt.softcap"} : i64, f64, memref<8x32xf32>, memref<8x32xf32>
// CHECK: gpt.call_builtin "cpu.cross_entropy.f32"({{.*}}, %[[T]], {{.*}}) {gpt.op = "gpt.cross_entropy"} : i64, i64, memref<8x32xf32>, memref<8xi32>, memref<f32>
// CHECK: gpt.call_builtin "cpu.add.f32"({{.*}}, %[[ACC]], %[[Y]], %[[SUM:.*]]) {gpt.op = "gpt.add"}
// CHECK: memref.copy %[[SUM]], %[[ACC]]
// CHECK: return %{{.*}}, %[[ACC]]
func.func @forward(%x: tensor<8x64xf32> {gpt.name = "x"}, %w: tensor<32x64xf32> {gpt.name = "w"},
                   %t: tensor<8xi32> {gpt.name = "targets"}, %acc: tensor<8x32xf32> {gpt.name = "acc"})
    -> (tensor<f32> {gpt.name = "loss"}, tensor<8x32xf32> {gpt.name = "acc"}) {
  %n = gpt.rms_norm %x {eps = 1.0e-6 : f64} : tensor<8x64xf32>
  %y = gpt.matmul %n, %w : tensor<8x64xf32>, tensor<32x64xf32>
  %c = gpt.softcap %y {cap = 15.0 : f64} : tensor<8x32xf32>
  %l = gpt.cross_entropy %c, %t : tensor<8x32xf32>, tensor<8xi32>
  %a = gpt.add %acc, %y : tensor<8x32xf32>, tensor<8x32xf32>
  return %l, %a : tensor<f32>, tensor<8x32xf32>
}

// -----

// The softcap's gradient is fused into the cross-entropy's (the cap as its scalar) and the
// softcap_grad launches nothing.
// CHECK-LABEL: func.func @backward
// CHECK: gpt.call_builtin "cpu.cross_entropy_grad.f32"(%{{.*}}, %{{.*}}, %[[CAP:.*]], %arg0, %arg1, %arg2, %{{.*}}) {gpt.op = "gpt.cross_entropy_grad"} : i64, i64, f64
// CHECK-NOT: gpt.call_builtin
// CHECK: return
func.func @backward(%y: tensor<8x32xf32> {gpt.name = "y"}, %t: tensor<8xi32> {gpt.name = "targets"},
                    %d: tensor<f32> {gpt.name = "dloss"}) -> (tensor<8x32xf32> {gpt.name = "dx"}) {
  %g = gpt.cross_entropy_grad %y, %t, %d : tensor<8x32xf32>, tensor<8xi32>, tensor<f32>
  %dx = gpt.softcap_grad %y, %g {cap = 15.0 : f64} : tensor<8x32xf32>, tensor<8x32xf32>
  return %dx : tensor<8x32xf32>
}

// -----

// A rotary without positions reads 0..T-1 from the constants; the permutation's dims and
// axes are padded to rank 8.
// CHECK-LABEL: func.func @rotary_and_transpose
// CHECK: %[[POS:.*]] = memref.get_global
// CHECK: gpt.call_builtin "cpu.rotary.f32"({{.*}}, %arg0, %[[POS]], %{{.*}})
// CHECK: gpt.call_builtin "cpu.permute.b32"(
// CHECK-SAME: i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, memref<2x4x3x8xf32>, memref<3x2x4x8xf32>
func.func @rotary_and_transpose(%x: tensor<2x4x3x8xf32> {gpt.name = "x"})
    -> (tensor<2x4x3x8xf32> {gpt.name = "r"}, tensor<3x2x4x8xf32> {gpt.name = "p"}) {
  %r = gpt.rotary %x {base = 10000.0 : f64} : tensor<2x4x3x8xf32>
  %p = gpt.transpose %x [2, 0, 1, 3] : tensor<2x4x3x8xf32>
  return %r, %p : tensor<2x4x3x8xf32>, tensor<3x2x4x8xf32>
}

// -----

// Under bf16 autocast (gpt-autocast-bf16 marks the module) a matmul's inputs are bf16 values:
// both matmuls launch the bf16 builtins, which run bf16 dot products where the CPU has them.
// CHECK-LABEL: func.func @autocast_bf16
// CHECK: gpt.call_builtin "cpu.matmul_bf16.f32"({{.*}}) {gpt.op = "gpt.matmul"} : i64, i64, i64, memref<8x64xf32>, memref<32x64xf32>, memref<8x32xf32>
// CHECK: gpt.call_builtin "cpu.matmul_weight_grad_bf16.f32"({{.*}}) {gpt.op = "gpt.matmul_weight_grad"} : i64, i64, i64, memref<8x32xf32>, memref<8x64xf32>, memref<32x64xf32>
module attributes {gpt.autocast = "bf16"} {
  func.func @autocast_bf16(%x: tensor<8x64xf32> {gpt.name = "x"}, %w: tensor<32x64xf32> {gpt.name = "w"},
                           %dy: tensor<8x32xf32> {gpt.name = "dy"})
      -> (tensor<8x32xf32> {gpt.name = "y"}, tensor<32x64xf32> {gpt.name = "dw"}) {
    %y = gpt.matmul %x, %w : tensor<8x64xf32>, tensor<32x64xf32>
    %dw = gpt.matmul_weight_grad %dy, %x : tensor<8x32xf32>, tensor<8x64xf32>
    return %y, %dw : tensor<8x32xf32>, tensor<32x64xf32>
  }
}
