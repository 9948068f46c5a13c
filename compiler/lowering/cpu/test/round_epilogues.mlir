// Under bf16 autocast a matmul whose only reader is the lone rounding right after it (a
// fusion of gpt.round_bf16 alone) is one launch, matmul_bf16_round, writing the rounded
// values into the fusion's buffer; the fusion launches nothing. (A matmul with another reader
// keeps matmul_bf16; the whole bf16 step's schedule shows both, tests/bf16_training_test.)
// rms_norm and rms_norm_grad likewise (rms_norm_round_bf16, rms_norm_grad_round_bf16; with the
// residual gradient added first, rms_norm_grad_add_round_bf16), and a
// rounding only an rms_norm_grad reads, as dy, is its prologue (rms_norm_grad_of_rounded_dy).
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers="alignment=64" --gpt-lower-fusions --gpt-lower-to-cpu 2>/dev/null | FileCheck %s

// CHECK-LABEL: func.func @matmul_round
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %[[Y:.*]]) {gpt.op = "gpt.matmul", gpt.ukernel = "xwt none bf16|round"}
// CHECK-NOT: gpt.launch_host_kernel
// CHECK-NOT: gpt.call_builtin
// CHECK: return %[[Y]]
module attributes {gpt.autocast = "bf16"} {
  func.func @matmul_round(%x: tensor<8x64xf32> {gpt.name = "x"}, %w: tensor<32x64xf32> {gpt.name = "w"})
      -> (tensor<8x32xf32> {gpt.name = "y"}) {
    %y = gpt.matmul %x, %w : tensor<8x64xf32>, tensor<32x64xf32>
    %r = gpt.fusion (%y) : (tensor<8x32xf32>) -> tensor<8x32xf32> {
    ^bb0(%a: tensor<8x32xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x32xf32>
      gpt.yield %0 : tensor<8x32xf32>
    }
    return %r : tensor<8x32xf32>
  }
}

// -----

// CHECK-LABEL: func.func @norms_round
// CHECK: gpt.call_builtin "cpu.norm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %[[Y:.*]]) {gpt.op = "gpt.rms_norm", gpt.ukernel = "rms_norm round"}
// CHECK: gpt.call_builtin "cpu.norm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %[[DX:.*]]) {gpt.op = "gpt.rms_norm_grad", gpt.ukernel = "rms_norm_grad round"}
// CHECK-NOT: gpt.launch_host_kernel
// CHECK: return %[[Y]], %[[DX]]
module attributes {gpt.autocast = "bf16"} {
  func.func @norms_round(%x: tensor<8x64xf32> {gpt.name = "x"}, %dy: tensor<8x64xf32> {gpt.name = "dy"})
      -> (tensor<8x64xf32> {gpt.name = "y"}, tensor<8x64xf32> {gpt.name = "dx"}) {
    %n = gpt.rms_norm %x {eps = 1.0e-6 : f64} : tensor<8x64xf32>
    %y = gpt.fusion (%n) : (tensor<8x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%a: tensor<8x64xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x64xf32>
      gpt.yield %0 : tensor<8x64xf32>
    }
    %g = gpt.rms_norm_grad %x, %dy {eps = 1.0e-6 : f64} : tensor<8x64xf32>, tensor<8x64xf32>
    %dx = gpt.fusion (%g) : (tensor<8x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%a: tensor<8x64xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x64xf32>
      gpt.yield %0 : tensor<8x64xf32>
    }
    return %y, %dx : tensor<8x64xf32>, tensor<8x64xf32>
  }
}

// -----

// The backward's shape: the rounding reads the matmul's result through a reshape (a view of
// its bytes), with the weight gradient between them (touching none of the rounding's bytes).
// CHECK-LABEL: func.func @matmul_reshape_round
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %[[Y:[^)]*]]) {gpt.op = "gpt.matmul", gpt.ukernel = "xwt none bf16|round"}
// CHECK: gpt.call_builtin "cpu.gemm.f32"{{.*}}gpt.ukernel = "dytx none bf16"
// CHECK-NOT: gpt.launch_host_kernel
// CHECK: return
module attributes {gpt.autocast = "bf16"} {
  func.func @matmul_reshape_round(%x: tensor<8x64xf32> {gpt.name = "x"}, %w: tensor<32x64xf32> {gpt.name = "w"},
                                  %dy: tensor<8x32xf32> {gpt.name = "dy"})
      -> (tensor<8x2x16xf32> {gpt.name = "y"}, tensor<32x64xf32> {gpt.name = "dw"}) {
    %y = gpt.matmul %x, %w : tensor<8x64xf32>, tensor<32x64xf32>
    %dw = gpt.matmul_weight_grad %dy, %x : tensor<8x32xf32>, tensor<8x64xf32>
    %v = gpt.reshape %y to [8, 2, 16] : tensor<8x32xf32>
    %r = gpt.fusion (%v) : (tensor<8x2x16xf32>) -> tensor<8x2x16xf32> {
    ^bb0(%a: tensor<8x2x16xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x2x16xf32>
      gpt.yield %0 : tensor<8x2x16xf32>
    }
    return %r, %dw : tensor<8x2x16xf32>, tensor<32x64xf32>
  }
}

// -----

// The bf16 QK-norm's backward: the rounding of the cotangent (attention's dq) is the norm
// gradient's prologue and the rounding of its result the epilogue: one launch, flags round|round_dy.
// CHECK-LABEL: func.func @norm_grad_of_rounded_dy
// CHECK: gpt.call_builtin "cpu.norm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %[[DX:[^)]*]]) {gpt.op = "gpt.rms_norm_grad", gpt.ukernel = "rms_norm_grad round|round_dy"}
// CHECK-NOT: gpt.launch_host_kernel
// CHECK-NOT: gpt.call_builtin
// CHECK: return %[[DX]]
module attributes {gpt.autocast = "bf16"} {
  func.func @norm_grad_of_rounded_dy(%x: tensor<8x64xf32> {gpt.name = "x"}, %dy: tensor<8x64xf32> {gpt.name = "dy"})
      -> (tensor<8x64xf32> {gpt.name = "dx"}) {
    %d = gpt.fusion (%dy) : (tensor<8x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%a: tensor<8x64xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x64xf32>
      gpt.yield %0 : tensor<8x64xf32>
    }
    %g = gpt.rms_norm_grad %x, %d {eps = 1.0e-6 : f64} : tensor<8x64xf32>, tensor<8x64xf32>
    %dx = gpt.fusion (%g) : (tensor<8x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%a: tensor<8x64xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x64xf32>
      gpt.yield %0 : tensor<8x64xf32>
    }
    return %dx : tensor<8x64xf32>
  }
}

// -----

// A matmul by a transposed weight (folded: matmul_grad_input, lower_to_cpu.mlir) absorbs the
// rounding after it too.
// CHECK-LABEL: func.func @matmul_by_transposed_weight_bf16
// CHECK-NOT: cpu.permute
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %{{.*}}) {gpt.op = "gpt.matmul", gpt.ukernel = "dyw none bf16|round"}
// CHECK-NOT: gpt.call_builtin
// CHECK: return
module attributes {gpt.autocast = "bf16"} {
  func.func @matmul_by_transposed_weight_bf16(%dy: tensor<8x32xf32> {gpt.name = "dy"},
                                              %w: tensor<32x16xf32> {gpt.name = "w"})
      -> (tensor<8x16xf32> {gpt.name = "dx"}) {
    %wt = gpt.transpose %w [1, 0] : tensor<32x16xf32>
    %dx = gpt.matmul %dy, %wt : tensor<8x32xf32>, tensor<16x32xf32>
    %r = gpt.fusion (%dx) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a: tensor<8x16xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x16xf32>
      gpt.yield %0 : tensor<8x16xf32>
    }
    return %r : tensor<8x16xf32>
  }
}

// -----

// The bf16 QK-norm: nanochat's bf16 rotary, the rms_norm of its result and the rounding of
// the norm are one pass (rotary_rms_norm_round_bf16), the rotation kept for the backward and
// the rounded norm written into the rounding's buffer.
// CHECK-LABEL: func.func @qk_norm_bf16
// CHECK: gpt.call_builtin "cpu.rotary.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[ROT:.*]], %[[Y:.*]]) {gpt.op = "gpt.rotary", gpt.ukernel = "rotary_rms_norm bf16"}
// CHECK-NOT: gpt.call_builtin
// CHECK-NOT: gpt.launch_host_kernel
// CHECK: return %[[ROT]], %[[Y]]
module attributes {gpt.autocast = "bf16"} {
  func.func @qk_norm_bf16(%x: tensor<2x4x3x8xf32> {gpt.name = "x"})
      -> (tensor<2x4x3x8xf32> {gpt.name = "rot"}, tensor<2x4x3x8xf32> {gpt.name = "y"}) {
    %r = gpt.rotary %x {round_bf16} : tensor<2x4x3x8xf32>
    %y = gpt.rms_norm %r : tensor<2x4x3x8xf32>
    %yr = gpt.fusion (%y) : (tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32> {
    ^bb0(%a: tensor<2x4x3x8xf32>):
      %0 = gpt.round_bf16 %a : tensor<2x4x3x8xf32>
      gpt.yield %0 : tensor<2x4x3x8xf32>
    }
    return %r, %yr : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>
  }
}

// -----

// Its backward: the cotangent's rounding, rms_norm_grad, the rounding of its result and the
// bf16 rotary's VJP are one pass (rms_norm_rotary_grad_of_rounded_dy_bf16), the norm's
// gradient never written.
// CHECK-LABEL: func.func @qk_norm_grad_bf16
// CHECK: gpt.call_builtin "cpu.rotary.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %{{.*}}, %{{.*}}, %{{.*}}, %[[DX:.*]]) {gpt.op = "gpt.rms_norm_grad", gpt.ukernel = "rms_norm_rotary_grad bf16"}
// CHECK-NOT: gpt.call_builtin
// CHECK-NOT: gpt.launch_host_kernel
// CHECK: return %[[DX]]
module attributes {gpt.autocast = "bf16"} {
  func.func @qk_norm_grad_bf16(%rot: tensor<2x4x3x8xf32> {gpt.name = "rot"}, %dy: tensor<2x4x3x8xf32> {gpt.name = "dy"})
      -> (tensor<2x4x3x8xf32> {gpt.name = "dx"}) {
    %dyr = gpt.fusion (%dy) : (tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32> {
    ^bb0(%a: tensor<2x4x3x8xf32>):
      %0 = gpt.round_bf16 %a : tensor<2x4x3x8xf32>
      gpt.yield %0 : tensor<2x4x3x8xf32>
    }
    %g = gpt.rms_norm_grad %rot, %dyr : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>
    %gr = gpt.fusion (%g) : (tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32> {
    ^bb0(%a: tensor<2x4x3x8xf32>):
      %0 = gpt.round_bf16 %a : tensor<2x4x3x8xf32>
      gpt.yield %0 : tensor<2x4x3x8xf32>
    }
    %dx = gpt.rotary_grad %gr {round_bf16} : tensor<2x4x3x8xf32>
    return %dx : tensor<2x4x3x8xf32>
  }
}

// -----

// Under bf16 autocast the MLP's matmul, the rounding of its result and the relu_square of
// that are one launch (matmul_bf16_round_relu_square).
// CHECK-LABEL: func.func @mlp_bf16
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %[[Y:[^,]*]], %[[R:[^)]*]]) {gpt.op = "gpt.matmul", gpt.ukernel = "xwt relu_square bf16|round"}
// CHECK-NOT: gpt.call_builtin
// CHECK-NOT: gpt.launch_host_kernel
// CHECK: return %[[Y]], %[[R]]
module attributes {gpt.autocast = "bf16"} {
  func.func @mlp_bf16(%x: tensor<8x16xf32> {gpt.name = "x"}, %w: tensor<32x16xf32> {gpt.name = "w"})
      -> (tensor<8x32xf32> {gpt.name = "y"}, tensor<8x32xf32> {gpt.name = "r"}) {
    %y = gpt.matmul %x, %w : tensor<8x16xf32>, tensor<32x16xf32>
    %yr = gpt.fusion (%y) : (tensor<8x32xf32>) -> tensor<8x32xf32> {
    ^bb0(%a: tensor<8x32xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x32xf32>
      gpt.yield %0 : tensor<8x32xf32>
    }
    %r = gpt.relu_square %yr : tensor<8x32xf32>
    return %yr, %r : tensor<8x32xf32>, tensor<8x32xf32>
  }
}

// -----

// When only bf16 GEMMs read the MLP's hidden activation (the output projection, fused with
// its residual norm, and that projection's weight gradient), its producer writes it prepared
// for them and both read it so (above, where r is also returned, it stays f32).
// CHECK-LABEL: func.func @mlp_hidden_prepared_bf16
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %{{[^,]*}}, %[[R:[^)]*]]) {gpt.op = "gpt.matmul", gpt.ukernel = "xwt relu_square bf16|round|prepared_out"}
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[R]], %arg2,{{.*}}gpt.ukernel = "xwt residual_rms_norm bf16|round|prepared_a"
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg4, %[[R]],{{.*}}gpt.ukernel = "dytx none bf16|prepared_b"
module attributes {gpt.autocast = "bf16"} {
  func.func @mlp_hidden_prepared_bf16(%x: tensor<8x16xf32> {gpt.name = "x"}, %w1: tensor<32x16xf32> {gpt.name = "w1"},
                                      %w2: tensor<16x32xf32> {gpt.name = "w2"}, %res: tensor<8x16xf32> {gpt.name = "res"},
                                      %dy: tensor<8x16xf32> {gpt.name = "dy"})
      -> (tensor<8x32xf32> {gpt.name = "y"}, tensor<8x16xf32> {gpt.name = "sum"}, tensor<8x16xf32> {gpt.name = "n"},
          tensor<16x32xf32> {gpt.name = "dw2"}) {
    %y = gpt.matmul %x, %w1 : tensor<8x16xf32>, tensor<32x16xf32>
    %yr = gpt.fusion (%y) : (tensor<8x32xf32>) -> tensor<8x32xf32> {
    ^bb0(%a: tensor<8x32xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x32xf32>
      gpt.yield %0 : tensor<8x32xf32>
    }
    %r = gpt.relu_square %yr : tensor<8x32xf32>
    %p = gpt.matmul %r, %w2 : tensor<8x32xf32>, tensor<16x32xf32>
    %s = gpt.fusion (%p, %res) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x16xf32>
      %1 = gpt.add %b, %0 : tensor<8x16xf32>, tensor<8x16xf32>
      %2 = gpt.round_bf16 %1 : tensor<8x16xf32>
      gpt.yield %2 : tensor<8x16xf32>
    }
    %n = gpt.rms_norm %s : tensor<8x16xf32>
    %dw2 = gpt.matmul_weight_grad %dy, %r : tensor<8x16xf32>, tensor<8x32xf32>
    return %yr, %s, %n, %dw2 : tensor<8x32xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16x32xf32>
  }
}

// -----

// A block's norm that only bf16 GEMMs read (the next block's rounded matmul and its weight
// gradient) is written prepared by the residual-norm epilogue that computes it, and read so.
// CHECK-LABEL: func.func @norm_prepared_bf16
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %arg2, %{{[^,]*}}, %{{[^,]*}}, %[[N:[^)]*]]){{.*}}gpt.ukernel = "xwt residual_rms_norm bf16|round|prepared_out"
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[N]], %arg3,{{.*}}gpt.ukernel = "xwt none bf16|round|prepared_a"
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg4, %[[N]],{{.*}}gpt.ukernel = "dytx none bf16|prepared_b"
module attributes {gpt.autocast = "bf16"} {
  func.func @norm_prepared_bf16(%x: tensor<8x16xf32> {gpt.name = "x"}, %w: tensor<32x16xf32> {gpt.name = "w"},
                                %res: tensor<8x32xf32> {gpt.name = "res"}, %wq: tensor<24x32xf32> {gpt.name = "wq"},
                                %dq: tensor<8x24xf32> {gpt.name = "dq"})
      -> (tensor<8x32xf32> {gpt.name = "sum"}, tensor<8x24xf32> {gpt.name = "q"}, tensor<24x32xf32> {gpt.name = "dwq"}) {
    %p = gpt.matmul %x, %w : tensor<8x16xf32>, tensor<32x16xf32>
    %s = gpt.fusion (%p, %res) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32> {
    ^bb0(%a: tensor<8x32xf32>, %b: tensor<8x32xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x32xf32>
      %1 = gpt.add %b, %0 : tensor<8x32xf32>, tensor<8x32xf32>
      %2 = gpt.round_bf16 %1 : tensor<8x32xf32>
      gpt.yield %2 : tensor<8x32xf32>
    }
    %n = gpt.rms_norm %s : tensor<8x32xf32>
    %q = gpt.matmul %n, %wq : tensor<8x32xf32>, tensor<24x32xf32>
    %qr = gpt.fusion (%q) : (tensor<8x24xf32>) -> tensor<8x24xf32> {
    ^bb0(%a: tensor<8x24xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x24xf32>
      gpt.yield %0 : tensor<8x24xf32>
    }
    %dwq = gpt.matmul_weight_grad %dq, %n : tensor<8x24xf32>, tensor<8x32xf32>
    return %s, %qr, %dwq : tensor<8x32xf32>, tensor<8x24xf32>, tensor<24x32xf32>
  }
}

// -----

// The MLP's relu² backward under bf16 autocast: the product by the folded transposed weight,
// the fusion that rounds it and takes relu²'s gradient (past the weight gradient between) are
// one launch, which writes the gradient prepared for the two GEMMs that alone read it.
// CHECK-LABEL: func.func @relu_square_grad_bf16
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %arg2, %{{[^,]*}}, %[[G:[^)]*]]){{.*}}gpt.ukernel = "dyw relu_square_grad bf16|round|prepared_out"
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg5,{{.*}}gpt.ukernel = "dytx none bf16"
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[G]], %arg3,{{.*}}gpt.ukernel = "dyw none bf16|prepared_a"
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[G]], %arg4,{{.*}}gpt.ukernel = "dytx none bf16|prepared_a"
// CHECK-NOT: gpt.launch_host_kernel
module attributes {gpt.autocast = "bf16"} {
  func.func @relu_square_grad_bf16(%dy: tensor<8x16xf32> {gpt.name = "dy"}, %w2: tensor<16x32xf32> {gpt.name = "w2"},
                                   %u: tensor<8x32xf32> {gpt.name = "u"}, %w1: tensor<32x24xf32> {gpt.name = "w1"},
                                   %x: tensor<8x24xf32> {gpt.name = "x"}, %h: tensor<8x32xf32> {gpt.name = "h"})
      -> (tensor<16x32xf32> {gpt.name = "dw2"}, tensor<8x24xf32> {gpt.name = "dx"}, tensor<32x24xf32> {gpt.name = "dw1"}) {
    %w2t = gpt.transpose %w2 [1, 0] : tensor<16x32xf32>
    %dh = gpt.matmul %dy, %w2t : tensor<8x16xf32>, tensor<32x16xf32>
    %dw2 = gpt.matmul_weight_grad %dy, %h : tensor<8x16xf32>, tensor<8x32xf32>
    %g = gpt.fusion (%dh, %u) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32> {
    ^bb0(%a: tensor<8x32xf32>, %b: tensor<8x32xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x32xf32>
      %1 = gpt.relu_square_grad %b, %0 : tensor<8x32xf32>, tensor<8x32xf32>
      gpt.yield %1 : tensor<8x32xf32>
    }
    %w1t = gpt.transpose %w1 [1, 0] : tensor<32x24xf32>
    %dx = gpt.matmul %g, %w1t : tensor<8x32xf32>, tensor<24x32xf32>
    %dw1 = gpt.matmul_weight_grad %g, %x : tensor<8x32xf32>, tensor<8x24xf32>
    return %dw2, %dx, %dw1 : tensor<16x32xf32>, tensor<8x24xf32>, tensor<32x24xf32>
  }
}

// -----

// A block's output projection under bf16 autocast: the matmul, the fusion that rounds it,
// adds it to the residual and rounds the sum, and the rms_norm of the sum are one launch
// (matmul_bf16_residual_rms_norm: the product's buffer, then the sum and the norm).
// CHECK-LABEL: func.func @projection_residual_norm_bf16
// CHECK: gpt.call_builtin "cpu.gemm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %arg2, %{{[^,]*}}, %[[SUM:[^,]*]], %[[Y:[^)]*]]) {gpt.op = "gpt.matmul", gpt.ukernel = "xwt residual_rms_norm bf16|round"}
// CHECK-NOT: gpt.call_builtin
// CHECK-NOT: gpt.launch_host_kernel
// CHECK: return %[[SUM]], %[[Y]]
module attributes {gpt.autocast = "bf16"} {
  func.func @projection_residual_norm_bf16(%x: tensor<8x16xf32> {gpt.name = "x"}, %w: tensor<32x16xf32> {gpt.name = "w"},
                                           %res: tensor<8x32xf32> {gpt.name = "res"})
      -> (tensor<8x32xf32> {gpt.name = "sum"}, tensor<8x32xf32> {gpt.name = "y"}) {
    %p = gpt.matmul %x, %w : tensor<8x16xf32>, tensor<32x16xf32>
    %s = gpt.fusion (%p, %res) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32> {
    ^bb0(%a: tensor<8x32xf32>, %b: tensor<8x32xf32>):
      %0 = gpt.round_bf16 %a : tensor<8x32xf32>
      %1 = gpt.add %b, %0 : tensor<8x32xf32>, tensor<8x32xf32>
      %2 = gpt.round_bf16 %1 : tensor<8x32xf32>
      gpt.yield %2 : tensor<8x32xf32>
    }
    %y = gpt.rms_norm %s : tensor<8x32xf32>
    return %s, %y : tensor<8x32xf32>, tensor<8x32xf32>
  }
}

// -----

// The residual gradient joining a norm's under bf16 autocast: the rms_norm_grad and the fusion
// right after it that adds the residual gradient and rounds the sum are one launch
// (rms_norm_grad_add_round_bf16), the norm's gradient never written.
// CHECK-LABEL: func.func @norm_grad_residual_bf16
// CHECK: gpt.call_builtin "cpu.norm.f32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg1, %arg2, %[[OUT:[^)]*]]) {gpt.op = "gpt.rms_norm_grad", gpt.ukernel = "rms_norm_grad_add round"}
// CHECK-NOT: gpt.call_builtin
// CHECK-NOT: gpt.launch_host_kernel
// CHECK: return
module attributes {gpt.autocast = "bf16"} {
  func.func @norm_grad_residual_bf16(%x: tensor<8x32xf32> {gpt.name = "x"}, %dy: tensor<8x32xf32> {gpt.name = "dy"},
                                     %r: tensor<8x32xf32> {gpt.name = "r"}) -> (tensor<8x32xf32> {gpt.name = "out"}) {
    %g = gpt.rms_norm_grad %x, %dy : tensor<8x32xf32>, tensor<8x32xf32>
    %s = gpt.fusion (%r, %g) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32> {
    ^bb0(%a: tensor<8x32xf32>, %b: tensor<8x32xf32>):
      %0 = gpt.add %a, %b : tensor<8x32xf32>, tensor<8x32xf32>
      %1 = gpt.round_bf16 %0 : tensor<8x32xf32>
      gpt.yield %1 : tensor<8x32xf32>
    }
    return %s : tensor<8x32xf32>
  }
}
