// gpt-lower-to-cpu: a planned entry point becomes its launch schedule for the cpu driver:
// every op a gpt.call_builtin of the driver's library kernel (runtime/device/cpu/BUILTINS.md:
// "cpu.<op>.<f32|f64>", dims and attributes as scalars first, then the buffers), every value a
// view of the arena at its planned offset, a result named like an argument copied home.
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers="alignment=64" --gpt-lower-to-cpu 2>/dev/null | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[T:[a-z0-9]+]]: memref<8xi32> {gpt.name = "targets", gpt.valid_range = array<i64: -1, 32>}
// CHECK-SAME: %[[ACC:[a-z0-9]+]]: memref<8x32xf32> {gpt.name = "acc"}, %[[ARENA:[a-z0-9]+]]: memref<?xi8> {gpt.arena}
// CHECK: gpt.call_builtin "cpu.norm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %{{.*}}) {gpt.op = "gpt.rms_norm", gpt.ukernel = "rms_norm -"} : i64, i64, i64, i64, f64, memref<8x64xf32>, memref<8x64xf32>
// CHECK: %[[Y:.*]] = memref.view %[[ARENA]]
// CHECK: gpt.call_builtin "cpu.gemm.f32"({{.*}}, %[[Y]]) {gpt.op = "gpt.matmul", gpt.ukernel = "xwt none -"} : i64, i64, i64, i64, i64, i64, f64, memref<8x64xf32>, memref<32x64xf32>, memref<8x32xf32>
// The softcap and the cross-entropy of its result are one pass, softcap_cross_entropy.
// CHECK: gpt.call_builtin "cpu.softcap_cross_entropy.f32"({{.*}}, %[[T]], {{.*}}) {gpt.op = "gpt.softcap"} : i64, i64, f64, memref<8x32xf32>, memref<8xi32>, memref<8x32xf32>, memref<f32>
// CHECK-NOT: "cpu.cross_entropy.f32"
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

// A rotary without positions reads 0..T-1 from the constants, and rotates by nanochat's cos
// and sin tables [T, D/2] baked in as constants (no trigonometry at run time); the
// permutation's dims and axes are padded to rank 8.
// CHECK-LABEL: func.func @rotary_and_transpose
// CHECK: %[[POS:.*]] = memref.get_global
// CHECK: %[[COS:.*]] = memref.get_global {{.*}} : memref<4x4xf32>
// CHECK: %[[SIN:.*]] = memref.get_global {{.*}} : memref<4x4xf32>
// CHECK: gpt.call_builtin "cpu.rotary.f32"({{.*}}, %arg0, %[[POS]], %[[COS]], %[[SIN]], %{{.*}}) {gpt.op = "gpt.rotary", gpt.ukernel = "rotary -"} : i64, i64, i64, i64, i64, i64, i64, f64, memref<2x4x3x8xf32>, memref<2x4xi32>, memref<4x4xf32>, memref<4x4xf32>, memref<2x4x3x8xf32>
// CHECK: gpt.call_builtin "cpu.permute.b32"(
// CHECK-SAME: i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, memref<2x4x3x8xf32>, memref<3x2x4x8xf32>
func.func @rotary_and_transpose(%x: tensor<2x4x3x8xf32> {gpt.name = "x"})
    -> (tensor<2x4x3x8xf32> {gpt.name = "r"}, tensor<3x2x4x8xf32> {gpt.name = "p"}) {
  %r = gpt.rotary %x {base = 10000.0 : f64} : tensor<2x4x3x8xf32>
  %p = gpt.transpose %x [2, 0, 1, 3] : tensor<2x4x3x8xf32>
  return %r, %p : tensor<2x4x3x8xf32>, tensor<3x2x4x8xf32>
}

// -----

// Rotary with per-token positions (packed rows): the positions argument must lie in [0, T),
// the tables' rows; forward and gradient share one pair of tables; round_bf16 picks the
// _bf16 builtins.
// CHECK-LABEL: func.func @rotary_positions
// CHECK-SAME: memref<2x4xi32> {gpt.name = "positions", gpt.valid_range = array<i64: 0, 4>}
// CHECK: %[[COS:.*]] = memref.get_global @[[COSG:[a-z_0-9]+]] : memref<4x4xf32>
// CHECK: %[[SIN:.*]] = memref.get_global @[[SING:[a-z_0-9]+]] : memref<4x4xf32>
// CHECK: gpt.call_builtin "cpu.rotary.f32"({{.*}}, %arg1, %[[COS]], %[[SIN]], %{{.*}}){{.*}}gpt.ukernel = "rotary bf16"
// CHECK: %[[COS2:.*]] = memref.get_global @[[COSG]] : memref<4x4xf32>
// CHECK: %[[SIN2:.*]] = memref.get_global @[[SING]] : memref<4x4xf32>
// CHECK: gpt.call_builtin "cpu.rotary.f32"({{.*}}, %arg1, %[[COS2]], %[[SIN2]], %{{.*}}){{.*}}gpt.ukernel = "rotary_grad -"
func.func @rotary_positions(%x: tensor<2x4x3x8xf32> {gpt.name = "x"}, %p: tensor<2x4xi32> {gpt.name = "positions"})
    -> (tensor<2x4x3x8xf32> {gpt.name = "r"}, tensor<2x4x3x8xf32> {gpt.name = "g"}) {
  %r = gpt.rotary %x, positions %p {round_bf16} : tensor<2x4x3x8xf32>, tensor<2x4xi32>
  %g = gpt.rotary_grad %x, positions %p : tensor<2x4x3x8xf32>, tensor<2x4xi32>
  return %r, %g : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>
}

// -----

// QK-norm fusion: a rotary with the rms_norm of its result right after it is one
// rotary_rms_norm launch (the rotation kept for the backward, the norm written beside it);
// the norm's gradient followed by the rotary's is one rms_norm_rotary_grad launch, the
// norm's gradient never written.
// CHECK-LABEL: func.func @qk_norm
// CHECK: gpt.call_builtin "cpu.rotary.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[EPS:.*]], %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[ROT:.*]], %[[Y:.*]]) {gpt.op = "gpt.rotary", gpt.ukernel = "rotary_rms_norm -"} : i64, i64, i64, i64, i64, i64, i64, f64, memref<2x4x3x8xf32>, memref<2x4xi32>, memref<4x4xf32>, memref<4x4xf32>, memref<2x4x3x8xf32>, memref<2x4x3x8xf32>
// CHECK-NOT: gpt.ukernel = "rms_norm -"
// CHECK: gpt.call_builtin "cpu.rotary.f32"({{.*}}, %[[ROT]], %arg1, %{{.*}}, %{{.*}}, %{{.*}}, %[[DX:.*]]) {gpt.op = "gpt.rms_norm_grad", gpt.ukernel = "rms_norm_rotary_grad -"} : i64, i64, i64, i64, i64, i64, i64, f64, memref<2x4x3x8xf32>, memref<2x4x3x8xf32>, memref<2x4xi32>, memref<4x4xf32>, memref<4x4xf32>, memref<2x4x3x8xf32>
// CHECK-NOT: gpt.call_builtin
// CHECK: return %[[Y]], %[[DX]]
func.func @qk_norm(%x: tensor<2x4x3x8xf32> {gpt.name = "x"}, %dy: tensor<2x4x3x8xf32> {gpt.name = "dy"})
    -> (tensor<2x4x3x8xf32> {gpt.name = "y"}, tensor<2x4x3x8xf32> {gpt.name = "dx"}) {
  %r = gpt.rotary %x : tensor<2x4x3x8xf32>
  %y = gpt.rms_norm %r : tensor<2x4x3x8xf32>
  %g = gpt.rms_norm_grad %r, %dy : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>
  %dx = gpt.rotary_grad %g : tensor<2x4x3x8xf32>
  return %y, %dx : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>
}

// -----

// No QK-norm fusion where the rounding differs (nanochat's bf16 rotary) or the gradient of
// the norm has another user: each op its own launch.
// CHECK-LABEL: func.func @qk_norm_unfused
// CHECK: gpt.call_builtin "cpu.rotary.f32"{{.*}}gpt.ukernel = "rotary bf16"
// CHECK: gpt.call_builtin "cpu.norm.f32"{{.*}}gpt.ukernel = "rms_norm -"
// CHECK: gpt.call_builtin "cpu.norm.f32"{{.*}}gpt.ukernel = "rms_norm_grad -"
// CHECK: gpt.call_builtin "cpu.rotary.f32"{{.*}}gpt.ukernel = "rotary_grad -"
func.func @qk_norm_unfused(%x: tensor<2x4x3x8xf32> {gpt.name = "x"}, %dy: tensor<2x4x3x8xf32> {gpt.name = "dy"})
    -> (tensor<2x4x3x8xf32> {gpt.name = "y"}, tensor<2x4x3x8xf32> {gpt.name = "dx"}, tensor<2x4x3x8xf32> {gpt.name = "g"}) {
  %r = gpt.rotary %x {round_bf16} : tensor<2x4x3x8xf32>
  %y = gpt.rms_norm %r : tensor<2x4x3x8xf32>
  %g = gpt.rms_norm_grad %r, %dy : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>
  %dx = gpt.rotary_grad %g : tensor<2x4x3x8xf32>
  return %y, %dx, %g : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>
}

// -----

// The loss fusion reaches the cross_entropy through reshapes, and reads the targets argument
// itself when a reshape of it stands between the two ops (that reshape's copy would run after
// the fused launch); a softcap whose next op is not its cross_entropy stays its own launch.
// CHECK-LABEL: func.func @softcap_loss_through_reshape
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<2x4x32xf32> {gpt.name = "x"}, %[[T:[a-z0-9]+]]: memref<2x4xi32> {gpt.name = "targets", gpt.valid_range = array<i64: -1, 32>}
// CHECK: gpt.call_builtin "cpu.softcap_cross_entropy.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %[[X]], %[[T]], %{{.*}}, %{{.*}}) {gpt.op = "gpt.softcap"} : i64, i64, f64, memref<2x4x32xf32>, memref<2x4xi32>, memref<2x4x32xf32>, memref<f32>
// CHECK: gpt.call_builtin "cpu.softcap.f32"
// CHECK: gpt.call_builtin "cpu.add.f32"
// CHECK: gpt.call_builtin "cpu.cross_entropy.f32"
func.func @softcap_loss_through_reshape(%x: tensor<2x4x32xf32> {gpt.name = "x"}, %t: tensor<2x4xi32> {gpt.name = "targets"})
    -> (tensor<f32> {gpt.name = "loss"}, tensor<f32> {gpt.name = "loss2"}) {
  %c = gpt.softcap %x {cap = 15.0 : f64} : tensor<2x4x32xf32>
  %r = gpt.reshape %c to [8, 32] : tensor<2x4x32xf32>
  %tr = gpt.reshape %t to [8] : tensor<2x4xi32>
  %l = gpt.cross_entropy %r, %tr : tensor<8x32xf32>, tensor<8xi32>
  %c2 = gpt.softcap %x {cap = 15.0 : f64} : tensor<2x4x32xf32>
  %a = gpt.add %c2, %x : tensor<2x4x32xf32>, tensor<2x4x32xf32>
  %r2 = gpt.reshape %c2 to [8, 32] : tensor<2x4x32xf32>
  %l2 = gpt.cross_entropy %r2, %tr : tensor<8x32xf32>, tensor<8xi32>
  return %l, %l2 : tensor<f32>, tensor<f32>
}

// -----

// The residual stream: an add with the rms_norm of its sum right after it is one
// add_rms_norm launch (the sum kept, the norm beside it); an rms_norm_grad whose only user is
// the add right after it is one rms_norm_grad_add launch, the norm's gradient never written.
// CHECK-LABEL: func.func @residual
// CHECK: gpt.call_builtin "cpu.norm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %[[SUM:.*]], %[[Y:.*]]) {gpt.op = "gpt.add", gpt.ukernel = "add_rms_norm -"} : i64, i64, i64, i64, f64, memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>
// CHECK-NOT: gpt.ukernel = "rms_norm -"
// CHECK: gpt.call_builtin "cpu.norm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SUM]], %arg2, %arg1, %[[OUT:.*]]) {gpt.op = "gpt.rms_norm_grad", gpt.ukernel = "rms_norm_grad_add -"} : i64, i64, i64, i64, f64, memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>
// CHECK-NOT: gpt.call_builtin
// CHECK: return %[[Y]], %[[OUT]]
func.func @residual(%a: tensor<8x64xf32> {gpt.name = "a"}, %b: tensor<8x64xf32> {gpt.name = "b"},
                    %dy: tensor<8x64xf32> {gpt.name = "dy"})
    -> (tensor<8x64xf32> {gpt.name = "y"}, tensor<8x64xf32> {gpt.name = "dx"}) {
  %s = gpt.add %a, %b : tensor<8x64xf32>, tensor<8x64xf32>
  %y = gpt.rms_norm %s : tensor<8x64xf32>
  %g = gpt.rms_norm_grad %s, %dy : tensor<8x64xf32>, tensor<8x64xf32>
  %dx = gpt.add %g, %b : tensor<8x64xf32>, tensor<8x64xf32>
  return %y, %dx : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// No residual fusion when the norm's gradient has another user or the norm reads something
// else than the sum: each op its own launch.
// CHECK-LABEL: func.func @residual_unfused
// CHECK: gpt.call_builtin "cpu.add.f32"
// CHECK: gpt.call_builtin "cpu.norm.f32"{{.*}}gpt.ukernel = "rms_norm -"
// CHECK: gpt.call_builtin "cpu.norm.f32"{{.*}}gpt.ukernel = "rms_norm_grad -"
// CHECK: gpt.call_builtin "cpu.add.f32"
func.func @residual_unfused(%a: tensor<8x64xf32> {gpt.name = "a"}, %b: tensor<8x64xf32> {gpt.name = "b"},
                            %dy: tensor<8x64xf32> {gpt.name = "dy"})
    -> (tensor<8x64xf32> {gpt.name = "s"}, tensor<8x64xf32> {gpt.name = "y"}, tensor<8x64xf32> {gpt.name = "dx"},
        tensor<8x64xf32> {gpt.name = "g"}) {
  %s = gpt.add %a, %b : tensor<8x64xf32>, tensor<8x64xf32>
  %y = gpt.rms_norm %a : tensor<8x64xf32>
  %g = gpt.rms_norm_grad %s, %dy : tensor<8x64xf32>, tensor<8x64xf32>
  %dx = gpt.add %g, %b : tensor<8x64xf32>, tensor<8x64xf32>
  return %s, %y, %dx, %g : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// A run of adds (the gradient accumulation's, one per parameter) is one add_list launch:
// the count, each add's elements, then a, b and the sum of each in order; the second reads
// the first's sum, which add_list allows (it runs them one after another).
// CHECK-LABEL: func.func @add_run
// CHECK: gpt.call_builtin "cpu.add_list.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %[[S1:.*]], %[[S1]], %arg0, %[[S2:.*]], %arg2, %arg3, %[[S3:.*]]) {gpt.op = "gpt.add"} : i64, i64, i64, i64, memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>
// CHECK-NOT: gpt.call_builtin
func.func @add_run(%a: tensor<8x64xf32> {gpt.name = "a"}, %b: tensor<8x64xf32> {gpt.name = "b"},
                   %c: tensor<4xf32> {gpt.name = "c"}, %d: tensor<4xf32> {gpt.name = "d"})
    -> (tensor<8x64xf32> {gpt.name = "s2"}, tensor<4xf32> {gpt.name = "s3"}) {
  %s1 = gpt.add %a, %b : tensor<8x64xf32>, tensor<8x64xf32>
  %s2 = gpt.add %s1, %a : tensor<8x64xf32>, tensor<8x64xf32>
  %s3 = gpt.add %c, %d : tensor<4xf32>, tensor<4xf32>
  return %s2, %s3 : tensor<8x64xf32>, tensor<4xf32>
}

// -----

// Under bf16 autocast (gpt-autocast-bf16 marks the module) a matmul's inputs are bf16 values:
// both matmuls launch the bf16 builtins, which run bf16 dot products where the CPU has them.
// CHECK-LABEL: func.func @autocast_bf16
// CHECK: gpt.call_builtin "cpu.gemm.f32"({{.*}}) {gpt.op = "gpt.matmul", gpt.ukernel = "xwt none bf16"} : i64, i64, i64, i64, i64, i64, f64, memref<8x64xf32>, memref<32x64xf32>, memref<8x32xf32>
// CHECK: gpt.call_builtin "cpu.gemm.f32"({{.*}}) {gpt.op = "gpt.matmul_weight_grad", gpt.ukernel = "dytx none bf16"} : i64, i64, i64, i64, i64, i64, f64, memref<8x32xf32>, memref<8x64xf32>, memref<32x64xf32>
module attributes {gpt.autocast = "bf16"} {
  func.func @autocast_bf16(%x: tensor<8x64xf32> {gpt.name = "x"}, %w: tensor<32x64xf32> {gpt.name = "w"},
                           %dy: tensor<8x32xf32> {gpt.name = "dy"})
      -> (tensor<8x32xf32> {gpt.name = "y"}, tensor<32x64xf32> {gpt.name = "dw"}) {
    %y = gpt.matmul %x, %w : tensor<8x64xf32>, tensor<32x64xf32>
    %dw = gpt.matmul_weight_grad %dy, %x : tensor<8x32xf32>, tensor<8x64xf32>
    return %y, %dw : tensor<8x32xf32>, tensor<32x64xf32>
  }
}

// -----

// The lm_head's loss and its VJP down to dx are one launch at the matmul's place:
// linear_softcap_cross_entropy_grad_v2 writes the loss, dy and dx (dx = dy w from w itself:
// w's transpose is never made); the logits are never written, and the weight gradient stays
// its own launch reading dy.
// CHECK-LABEL: func.func @lm_head_loss
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<2x4x16xf32> {gpt.name = "x"}, %[[W:[a-z0-9]+]]: memref<32x16xf32> {gpt.name = "w"}, %[[T:[a-z0-9]+]]: memref<2x4xi32> {gpt.name = "targets", gpt.valid_range = array<i64: -1, 32>}
// CHECK-NOT: gpt.call_builtin
// CHECK: gpt.call_builtin "cpu.linear_softcap_cross_entropy_grad_v2.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[X]], %[[W]], %[[T]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {gpt.op = "gpt.matmul"} : i64, i64, i64, f64, memref<2x4x16xf32>, memref<32x16xf32>, memref<2x4xi32>, memref<f32>, memref<f32>, memref<2x4x32xf32>, memref<2x4x16xf32>
// CHECK-NOT: cpu.permute
// CHECK-NOT: cpu.softcap
// CHECK-NOT: cpu.cross_entropy
// CHECK-NOT: gpt.ukernel = "xwt
// CHECK: gpt.call_builtin "cpu.gemm.f32"{{.*}}gpt.ukernel = "dytx none -"
func.func @lm_head_loss(%x: tensor<2x4x16xf32> {gpt.name = "x"}, %w: tensor<32x16xf32> {gpt.name = "w"},
                        %t: tensor<2x4xi32> {gpt.name = "targets"})
    -> (tensor<f32> {gpt.name = "loss"}, tensor<2x4x16xf32> {gpt.name = "dx"}, tensor<32x16xf32> {gpt.name = "dw"}) {
  %d = arith.constant dense<1.0> : tensor<f32>
  %y = gpt.matmul %x, %w : tensor<2x4x16xf32>, tensor<32x16xf32>
  %c = gpt.softcap %y {cap = 15.0 : f64} : tensor<2x4x32xf32>
  %r = gpt.reshape %c to [-1, 32] : tensor<2x4x32xf32>
  %tr = gpt.reshape %t to [-1] : tensor<2x4xi32>
  %l = gpt.cross_entropy %r, %tr : tensor<8x32xf32>, tensor<8xi32>
  %g = gpt.cross_entropy_grad %r, %tr, %d : tensor<8x32xf32>, tensor<8xi32>, tensor<f32>
  %gr = gpt.reshape %g to [2, 4, 32] : tensor<8x32xf32>
  %dy = gpt.softcap_grad %c, %gr {cap = 15.0 : f64} : tensor<2x4x32xf32>, tensor<2x4x32xf32>
  %wt = gpt.transpose %w [1, 0] : tensor<32x16xf32>
  %dx = gpt.matmul %dy, %wt : tensor<2x4x32xf32>, tensor<16x32xf32>
  %dw = gpt.matmul_weight_grad %dy, %x : tensor<2x4x32xf32>, tensor<2x4x16xf32>
  return %l, %dx, %dw : tensor<f32>, tensor<2x4x16xf32>, tensor<32x16xf32>
}

// -----

// Under bf16 autocast the same chain with its two roundings (the logits' before nanochat's
// bf16 softcap, the loss gradient's before the softcap's gradient) is one launch too,
// linear_softcap_bf16_cross_entropy_grad_v2, whose products round x, w and dy as the bf16
// matmuls do; the weight gradient stays its own bf16 launch reading dy, which the fused launch
// writes prepared for it, in the weight gradient's slabs (dy layout 2), since nothing else
// reads it.
// CHECK-LABEL: func.func @lm_head_loss_bf16
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<8x16xf32> {gpt.name = "x"}, %[[W:[a-z0-9]+]]: memref<32x16xf32> {gpt.name = "w"}, %[[T:[a-z0-9]+]]: memref<8xi32> {gpt.name = "targets", gpt.valid_range = array<i64: -1, 32>}
// CHECK-NOT: gpt.call_builtin
// CHECK: gpt.call_builtin "cpu.linear_softcap_bf16_cross_entropy_grad_v2.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{c2_i64[_0-9]*}}, %{{.*}}, %[[X]], %[[W]], %[[T]], %{{.*}}, %{{.*}}, %[[DY:[^,]*]], %{{.*}}) {gpt.op = "gpt.matmul"}
// CHECK-NOT: cpu.permute
// CHECK-NOT: round_bf16
// CHECK-NOT: softcap
// CHECK-NOT: cross_entropy
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[DY]], %[[X]],{{.*}}gpt.ukernel = "dytx none bf16|slabs_a"
module attributes {gpt.autocast = "bf16"} {
  func.func @lm_head_loss_bf16(%x: tensor<8x16xf32> {gpt.name = "x"}, %w: tensor<32x16xf32> {gpt.name = "w"},
                               %t: tensor<8xi32> {gpt.name = "targets"})
      -> (tensor<f32> {gpt.name = "loss"}, tensor<8x16xf32> {gpt.name = "dx"}, tensor<32x16xf32> {gpt.name = "dw"}) {
    %d = arith.constant dense<1.0> : tensor<f32>
    %y = gpt.matmul %x, %w : tensor<8x16xf32>, tensor<32x16xf32>
    %yr = gpt.round_bf16 %y : tensor<8x32xf32>
    %c = gpt.softcap %yr {round_bf16} : tensor<8x32xf32>
    %l = gpt.cross_entropy %c, %t : tensor<8x32xf32>, tensor<8xi32>
    %g = gpt.cross_entropy_grad %c, %t, %d : tensor<8x32xf32>, tensor<8xi32>, tensor<f32>
    %gr = gpt.round_bf16 %g : tensor<8x32xf32>
    %dy = gpt.softcap_grad %c, %gr : tensor<8x32xf32>, tensor<8x32xf32>
    %wt = gpt.transpose %w [1, 0] : tensor<32x16xf32>
    %dx = gpt.matmul %dy, %wt : tensor<8x32xf32>, tensor<16x32xf32>
    %dw = gpt.matmul_weight_grad %dy, %x : tensor<8x32xf32>, tensor<8x16xf32>
    return %l, %dx, %dw : tensor<f32>, tensor<8x16xf32>, tensor<32x16xf32>
  }
}

// -----

// The same chain outside bf16 autocast (f32 matmuls with explicit roundings) is not fused:
// the fused bf16 kernel would round the matmuls' inputs, which these do not.
// CHECK-LABEL: func.func @lm_head_loss_rounded_f32
// CHECK: gpt.call_builtin "cpu.gemm.f32"{{.*}}gpt.ukernel = "xwt none -"
// CHECK-NOT: linear_softcap
func.func @lm_head_loss_rounded_f32(%x: tensor<8x16xf32> {gpt.name = "x"}, %w: tensor<32x16xf32> {gpt.name = "w"},
                                    %t: tensor<8xi32> {gpt.name = "targets"})
    -> (tensor<f32> {gpt.name = "loss"}, tensor<8x16xf32> {gpt.name = "dx"}) {
  %d = arith.constant dense<1.0> : tensor<f32>
  %y = gpt.matmul %x, %w : tensor<8x16xf32>, tensor<32x16xf32>
  %yr = gpt.round_bf16 %y : tensor<8x32xf32>
  %c = gpt.softcap %yr {round_bf16} : tensor<8x32xf32>
  %l = gpt.cross_entropy %c, %t : tensor<8x32xf32>, tensor<8xi32>
  %g = gpt.cross_entropy_grad %c, %t, %d : tensor<8x32xf32>, tensor<8xi32>, tensor<f32>
  %gr = gpt.round_bf16 %g : tensor<8x32xf32>
  %dy = gpt.softcap_grad %c, %gr : tensor<8x32xf32>, tensor<8x32xf32>
  %wt = gpt.transpose %w [1, 0] : tensor<32x16xf32>
  %dx = gpt.matmul %dy, %wt : tensor<8x32xf32>, tensor<16x32xf32>
  return %l, %dx : tensor<f32>, tensor<8x16xf32>
}

// -----

// nanochat's bf16 softcap on the cpu target: the rounding of the logits before it, the
// softcap and the cross-entropy after it are one pass (softcap_bf16_cross_entropy, round_input
// 1, the softcap's result written to its own buffer; profiles call it the softcap); the backward's loss gradient, its
// rounding and the softcap's gradient another (cross_entropy_grad_softcap_bf16).
// CHECK-LABEL: func.func @bf16_softcap_loss
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: gpt.call_builtin "cpu.softcap_bf16_cross_entropy.f32"(%{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %arg0, %arg1, %[[Y:[^,]*]], %{{.*}}) {gpt.op = "gpt.softcap"}
// CHECK-NOT: "cpu.round_bf16.f32"
// CHECK-NOT: "cpu.cross_entropy.f32"
// CHECK: gpt.call_builtin "cpu.cross_entropy_grad_softcap_bf16.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %[[Y]], %arg1, %{{.*}}, %{{.*}}) {gpt.op = "gpt.cross_entropy_grad"}
// CHECK-NOT: gpt.call_builtin
// CHECK: return
module attributes {gpt.autocast = "bf16"} {
  func.func @bf16_softcap_loss(%x: tensor<8x32xf32> {gpt.name = "x"}, %t: tensor<8xi32> {gpt.name = "targets"},
                               %d: tensor<f32> {gpt.name = "dloss"})
      -> (tensor<f32> {gpt.name = "loss"}, tensor<8x32xf32> {gpt.name = "dx"}) {
    %r = gpt.round_bf16 %x : tensor<8x32xf32>
    %y = gpt.softcap %r {round_bf16} : tensor<8x32xf32>
    %l = gpt.cross_entropy %y, %t : tensor<8x32xf32>, tensor<8xi32>
    %g = gpt.cross_entropy_grad %y, %t, %d : tensor<8x32xf32>, tensor<8xi32>, tensor<f32>
    %gr = gpt.round_bf16 %g : tensor<8x32xf32>
    %dx = gpt.softcap_grad %y, %gr : tensor<8x32xf32>, tensor<8x32xf32>
    return %l, %dx : tensor<f32>, tensor<8x32xf32>
  }
}

// -----

// Not fused when the softcapped logits have another reader (here a function result): the
// chain runs as before.
// CHECK-LABEL: func.func @lm_head_loss_logits_kept
// CHECK: gpt.call_builtin "cpu.gemm.f32"{{.*}}gpt.ukernel = "xwt none -"
// CHECK: gpt.call_builtin "cpu.softcap_cross_entropy.f32"
// CHECK-NOT: linear_softcap_cross_entropy_grad
func.func @lm_head_loss_logits_kept(%x: tensor<8x16xf32> {gpt.name = "x"}, %w: tensor<32x16xf32> {gpt.name = "w"},
                                    %t: tensor<8xi32> {gpt.name = "targets"})
    -> (tensor<f32> {gpt.name = "loss"}, tensor<8x16xf32> {gpt.name = "dx"}, tensor<8x32xf32> {gpt.name = "logits"}) {
  %d = arith.constant dense<1.0> : tensor<f32>
  %y = gpt.matmul %x, %w : tensor<8x16xf32>, tensor<32x16xf32>
  %c = gpt.softcap %y {cap = 15.0 : f64} : tensor<8x32xf32>
  %l = gpt.cross_entropy %c, %t : tensor<8x32xf32>, tensor<8xi32>
  %g = gpt.cross_entropy_grad %c, %t, %d : tensor<8x32xf32>, tensor<8xi32>, tensor<f32>
  %dy = gpt.softcap_grad %c, %g {cap = 15.0 : f64} : tensor<8x32xf32>, tensor<8x32xf32>
  %wt = gpt.transpose %w [1, 0] : tensor<32x16xf32>
  %dx = gpt.matmul %dy, %wt : tensor<8x32xf32>, tensor<16x32xf32>
  return %l, %dx, %c : tensor<f32>, tensor<8x16xf32>, tensor<8x32xf32>
}

// -----

// Without a loss after it the bf16 softcap is softcap_bf16 (round_input 0: nothing rounds its
// input here); a rounding nothing absorbs is the round_bf16 builtin, and a softcap_grad whose
// cotangent is no loss gradient the softcap_grad one.
// CHECK-LABEL: func.func @bf16_softcap_alone
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: gpt.call_builtin "cpu.softcap_bf16.f32"(%{{.*}}, %[[ZERO]], %{{.*}}, %arg0, %{{.*}}) {gpt.op = "gpt.softcap"}
// CHECK: gpt.call_builtin "cpu.round_bf16.f32"(%{{.*}}, %arg1, %{{.*}}) {gpt.op = "gpt.round_bf16"}
// CHECK: gpt.call_builtin "cpu.softcap_grad.f32"
module attributes {gpt.autocast = "bf16"} {
  func.func @bf16_softcap_alone(%x: tensor<8x32xf32> {gpt.name = "x"}, %dy: tensor<8x32xf32> {gpt.name = "dy"})
      -> (tensor<8x32xf32> {gpt.name = "y"}, tensor<8x32xf32> {gpt.name = "dx"}) {
    %y = gpt.softcap %x {round_bf16} : tensor<8x32xf32>
    %d = gpt.round_bf16 %dy : tensor<8x32xf32>
    %dx = gpt.softcap_grad %y, %d : tensor<8x32xf32>, tensor<8x32xf32>
    return %y, %dx : tensor<8x32xf32>, tensor<8x32xf32>
  }
}

// -----

// Under bf16 autocast attention's q, k, v (and dout) are bf16 values: the forward and the
// gradient launch the bf16 builtins (bf16 tile products, P and dS rounded to bf16); the
// gradient reads the forward's persistent lse.
// CHECK-LABEL: func.func @autocast_bf16_attention
// CHECK: gpt.call_builtin "cpu.attention.f32"({{.*}}) {gpt.op = "gpt.attention", gpt.ukernel = "forward bf16"}
// CHECK: gpt.call_builtin "cpu.attention.f32"({{.*}}) {gpt.op = "gpt.attention_grad", gpt.ukernel = "backward bf16"}
// CHECK-NOT: gpt.ukernel = "forward -"
module attributes {gpt.autocast = "bf16"} {
  func.func @autocast_bf16_attention(%q: tensor<1x8x2x16xf32> {gpt.name = "q"}, %k: tensor<1x8x2x16xf32> {gpt.name = "k"},
                                     %v: tensor<1x8x2x16xf32> {gpt.name = "v"}, %do: tensor<1x8x2x16xf32> {gpt.name = "dout"})
      -> (tensor<1x8x2x16xf32> {gpt.name = "o"}, tensor<1x8x2x16xf32> {gpt.name = "dq"}, tensor<1x8x2x16xf32> {gpt.name = "dk"},
          tensor<1x8x2x16xf32> {gpt.name = "dv"}) {
    %o = gpt.attention %q, %k, %v : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>
    %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>
    return %o, %dq, %dk, %dv : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>
  }
}

// -----

// Under bf16 autocast a dv that only bf16 GEMMs read (through a reshape that is a view): the
// value projection's input gradient (by its folded transposed weight) and weight gradient. The
// gradient launch writes it prepared for them and they read it so.
// CHECK-LABEL: func.func @bf16_attention_grad_prepared_dv
// CHECK: gpt.call_builtin "cpu.attention.f32"({{.*}}) {gpt.op = "gpt.attention_grad", gpt.ukernel = "backward bf16|prepared_dv"}
// CHECK-NOT: gpt.call_builtin "cpu.round_bf16
// CHECK: gpt.call_builtin "cpu.gemm.f32"{{.*}}gpt.ukernel = "dyw none bf16|prepared_a"
// CHECK: gpt.call_builtin "cpu.gemm.f32"{{.*}}gpt.ukernel = "dytx none bf16|prepared_a"
module attributes {gpt.autocast = "bf16"} {
  func.func @bf16_attention_grad_prepared_dv(%q: tensor<1x8x2x16xf32> {gpt.name = "q"}, %k: tensor<1x8x2x16xf32> {gpt.name = "k"},
                                             %v: tensor<1x8x2x16xf32> {gpt.name = "v"}, %do: tensor<1x8x2x16xf32> {gpt.name = "dout"},
                                             %wv: tensor<32x32xf32> {gpt.name = "wv"}, %x: tensor<1x8x32xf32> {gpt.name = "x"})
      -> (tensor<1x8x2x16xf32> {gpt.name = "dq"}, tensor<1x8x2x16xf32> {gpt.name = "dk"}, tensor<1x8x32xf32> {gpt.name = "dx"},
          tensor<32x32xf32> {gpt.name = "dwv"}) {
    %o = gpt.attention %q, %k, %v : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>
    %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>
    %dvr = gpt.reshape %dv to [1, 8, 32] : tensor<1x8x2x16xf32>
    %wvt = gpt.transpose %wv [1, 0] : tensor<32x32xf32>
    %dx = gpt.matmul %dvr, %wvt : tensor<1x8x32xf32>, tensor<32x32xf32>
    %dwv = gpt.matmul_weight_grad %dvr, %x : tensor<1x8x32xf32>, tensor<1x8x32xf32>
    return %dq, %dk, %dx, %dwv : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x32xf32>, tensor<32x32xf32>
  }
}

// -----

// dv returned as well (read by something other than a bf16 GEMM) stays f32.
// CHECK-LABEL: func.func @bf16_attention_grad_dv_returned
// CHECK: gpt.call_builtin "cpu.attention.f32"({{.*}}) {gpt.op = "gpt.attention_grad", gpt.ukernel = "backward bf16"}
// CHECK-NOT: prepared
// CHECK: return
module attributes {gpt.autocast = "bf16"} {
  func.func @bf16_attention_grad_dv_returned(%q: tensor<1x8x2x16xf32> {gpt.name = "q"}, %k: tensor<1x8x2x16xf32> {gpt.name = "k"},
                                             %v: tensor<1x8x2x16xf32> {gpt.name = "v"}, %do: tensor<1x8x2x16xf32> {gpt.name = "dout"},
                                             %wv: tensor<32x32xf32> {gpt.name = "wv"})
      -> (tensor<1x8x32xf32> {gpt.name = "dx"}, tensor<1x8x2x16xf32> {gpt.name = "dv"}) {
    %o = gpt.attention %q, %k, %v : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>
    %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>
    %dvr = gpt.reshape %dv to [1, 8, 32] : tensor<1x8x2x16xf32>
    %wvt = gpt.transpose %wv [1, 0] : tensor<32x32xf32>
    %dx = gpt.matmul %dvr, %wvt : tensor<1x8x32xf32>, tensor<32x32xf32>
    return %dx, %dv : tensor<1x8x32xf32>, tensor<1x8x2x16xf32>
  }
}

// -----

// The same attention without autocast keeps the f32 builtins.
// CHECK-LABEL: func.func @f32_attention
// CHECK: gpt.call_builtin "cpu.attention.f32"({{.*}}) {gpt.op = "gpt.attention", gpt.ukernel = "forward -"}
func.func @f32_attention(%q: tensor<1x8x2x16xf32> {gpt.name = "q"}, %k: tensor<1x8x2x16xf32> {gpt.name = "k"},
                         %v: tensor<1x8x2x16xf32> {gpt.name = "v"}) -> (tensor<1x8x2x16xf32> {gpt.name = "o"}) {
  %o = gpt.attention %q, %k, %v : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>
  return %o : tensor<1x8x2x16xf32>
}

// -----

// A transposed weight read only by matmuls is never copied: each multiplies by the weight
// itself (matmul_grad_input, M N K = 8 32 16), under bf16 autocast its bf16 kernel with the
// rounding after it absorbed.
// CHECK-LABEL: func.func @matmul_by_transposed_weight
// CHECK-NOT: cpu.permute
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %{{.*}}) {gpt.op = "gpt.matmul", gpt.ukernel = "dyw none -"}
// CHECK-NOT: cpu.permute
// CHECK: return
func.func @matmul_by_transposed_weight(%dy: tensor<8x32xf32> {gpt.name = "dy"}, %w: tensor<32x16xf32> {gpt.name = "w"})
    -> (tensor<8x16xf32> {gpt.name = "dx"}) {
  %wt = gpt.transpose %w [1, 0] : tensor<32x16xf32>
  %dx = gpt.matmul %dy, %wt : tensor<8x32xf32>, tensor<16x32xf32>
  return %dx : tensor<8x16xf32>
}

// -----

// The copy is made when something else reads it (here: it is returned), and the matmul reads
// the copy.
// CHECK-LABEL: func.func @transposed_weight_kept
// CHECK: gpt.call_builtin "cpu.permute.b32"
// CHECK: gpt.call_builtin "cpu.gemm.f32"{{.*}}gpt.ukernel = "xwt none -"
// CHECK-NOT: matmul_grad_input
func.func @transposed_weight_kept(%dy: tensor<8x32xf32> {gpt.name = "dy"}, %w: tensor<32x16xf32> {gpt.name = "w"})
    -> (tensor<8x16xf32> {gpt.name = "dx"}, tensor<16x32xf32> {gpt.name = "wt"}) {
  %wt = gpt.transpose %w [1, 0] : tensor<32x16xf32>
  %dx = gpt.matmul %dy, %wt : tensor<8x32xf32>, tensor<16x32xf32>
  return %dx, %wt : tensor<8x16xf32>, tensor<16x32xf32>
}

// -----

// The MLP: a matmul with relu_square right after it is one launch (matmul_relu_square), the
// pre-activation kept (relu²'s gradient reads it) and the square written beside it; a
// relu_square of something else stays its own launch.
// CHECK-LABEL: func.func @mlp_matmul_relu_square
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %[[Y:[^,]*]], %[[R:[^)]*]]) {gpt.op = "gpt.matmul", gpt.ukernel = "xwt relu_square -"}
// CHECK: gpt.call_builtin "cpu.relu_square.f32"(%{{.*}}, %arg0, %{{.*}}) {gpt.op = "gpt.relu_square"}
// CHECK: return %[[Y]], %[[R]]
func.func @mlp_matmul_relu_square(%x: tensor<8x16xf32> {gpt.name = "x"}, %w: tensor<32x16xf32> {gpt.name = "w"})
    -> (tensor<8x32xf32> {gpt.name = "y"}, tensor<8x32xf32> {gpt.name = "r"}, tensor<8x16xf32> {gpt.name = "rx"}) {
  %y = gpt.matmul %x, %w : tensor<8x16xf32>, tensor<32x16xf32>
  %r = gpt.relu_square %y : tensor<8x32xf32>
  %rx = gpt.relu_square %x : tensor<8x16xf32>
  return %y, %r, %rx : tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x16xf32>
}
