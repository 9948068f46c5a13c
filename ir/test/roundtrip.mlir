// Every gpt op parses, prints, and parses again to the same text (custom and generic forms).
// RUN: gpt-opt %s | gpt-opt | FileCheck %s
// RUN: gpt-opt %s --mlir-print-op-generic | gpt-opt | FileCheck %s

// CHECK-LABEL: func.func @forward
func.func @forward(%wte: tensor<64x16xbf16>, %ids: tensor<2x8xi32>, %w: tensor<32x16xbf16>,
                   %pos: tensor<2x8xi32>, %seg: tensor<2x8xi32>, %q: tensor<2x8x4x8xbf16>,
                   %k: tensor<2x8x2x8xbf16>, %logits: tensor<16x64xf32>,
                   %targets: tensor<16xi32>, %logits3: tensor<16x8x1x8xf32>,
                   %pos16: tensor<16x8xi32>) -> tensor<f32> {
  // CHECK: gpt.embedding %{{.*}}[%{{.*}}] : tensor<64x16xbf16>, tensor<2x8xi32>
  %x = gpt.embedding %wte[%ids] : tensor<64x16xbf16>, tensor<2x8xi32>
  // CHECK: gpt.rms_norm %{{.*}} : tensor<2x8x16xbf16>
  %n = gpt.rms_norm %x : tensor<2x8x16xbf16>
  // CHECK: gpt.rms_norm %{{.*}} {eps = 9.9{{[0-9]*}}E-7 : f64} : tensor<2x8x16xbf16>
  %n2 = gpt.rms_norm %x {eps = 1.0e-6 : f64} : tensor<2x8x16xbf16>
  // CHECK: gpt.matmul %{{.*}}, %{{.*}} : tensor<2x8x16xbf16>, tensor<32x16xbf16>
  %h = gpt.matmul %n, %w : tensor<2x8x16xbf16>, tensor<32x16xbf16>
  // CHECK: gpt.reshape %{{.*}} to [2, 8, 4, 8] : tensor<2x8x32xbf16>
  %r = gpt.reshape %h to [2, 8, 4, 8] : tensor<2x8x32xbf16>
  // CHECK: gpt.rotary %{{.*}} : tensor<2x8x4x8xbf16>
  %q1 = gpt.rotary %q : tensor<2x8x4x8xbf16>
  // CHECK: gpt.rotary %{{.*}}, positions %{{.*}} : tensor<2x8x2x8xbf16>, tensor<2x8xi32>
  %k1 = gpt.rotary %k, positions %pos : tensor<2x8x2x8xbf16>, tensor<2x8xi32>
  // CHECK: gpt.rotary %{{.*}} {base = 5.000000e+05 : f64} : tensor<2x8x4x8xbf16>
  %q2 = gpt.rotary %q {base = 500000.0 : f64} : tensor<2x8x4x8xbf16>
  // CHECK: gpt.rotary %{{.*}}, positions %{{.*}} {round_bf16} : tensor<16x8x1x8xf32>, tensor<16x8xi32>
  %q3 = gpt.rotary %logits3, positions %pos16 {round_bf16} : tensor<16x8x1x8xf32>, tensor<16x8xi32>
  // CHECK: gpt.rotary_grad %{{.*}} {round_bf16} : tensor<16x8x1x8xf32>
  %dq3 = gpt.rotary_grad %q3 {round_bf16} : tensor<16x8x1x8xf32>
  // CHECK: gpt.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x4x8xbf16>, tensor<2x8x2x8xbf16>, tensor<2x8x2x8xbf16>
  %o = gpt.attention %q1, %k1, %k1 : tensor<2x8x4x8xbf16>, tensor<2x8x2x8xbf16>, tensor<2x8x2x8xbf16>
  // CHECK: gpt.attention %{{.*}}, %{{.*}}, %{{.*}}, segments %{{.*}} {causal = false, scale = 2.500000e-01 : f64} : tensor<2x8x4x8xbf16>, tensor<2x8x2x8xbf16>, tensor<2x8x2x8xbf16>, tensor<2x8xi32>
  %o2 = gpt.attention %q1, %k1, %k1, segments %seg {causal = false, scale = 0.25 : f64} : tensor<2x8x4x8xbf16>, tensor<2x8x2x8xbf16>, tensor<2x8x2x8xbf16>, tensor<2x8xi32>
  // CHECK: gpt.transpose %{{.*}} [0, 2, 1, 3] : tensor<2x8x4x8xbf16>
  %t = gpt.transpose %o [0, 2, 1, 3] : tensor<2x8x4x8xbf16>
  // CHECK: gpt.relu_square %{{.*}} : tensor<2x8x32xbf16>
  %a = gpt.relu_square %h : tensor<2x8x32xbf16>
  // CHECK: gpt.softcap %{{.*}} : tensor<2x8x32xbf16>
  %s = gpt.softcap %a : tensor<2x8x32xbf16>
  // CHECK: gpt.softcap %{{.*}} {cap = 3.000000e+01 : f64} : tensor<2x8x32xbf16>
  %s2 = gpt.softcap %a {cap = 30.0 : f64} : tensor<2x8x32xbf16>
  // CHECK: gpt.add %{{.*}}, %{{.*}} : tensor<2x8x32xbf16>, tensor<2x8x32xbf16>
  %sum = gpt.add %a, %s : tensor<2x8x32xbf16>, tensor<2x8x32xbf16>
  // CHECK: gpt.mul %{{.*}}, %{{.*}} : tensor<2x8x32xbf16>, tensor<2x8x32xbf16>
  %prod = gpt.mul %a, %s : tensor<2x8x32xbf16>, tensor<2x8x32xbf16>
  // CHECK: gpt.softcap %{{.*}} {round_bf16} : tensor<16x64xf32>
  %capped = gpt.softcap %logits {round_bf16} : tensor<16x64xf32>
  // CHECK: gpt.round_bf16 %{{.*}} : tensor<16x64xf32>
  %rounded = gpt.round_bf16 %logits : tensor<16x64xf32>
  // CHECK: gpt.cross_entropy %{{.*}}, %{{.*}} : tensor<16x64xf32>, tensor<16xi32>
  %loss = gpt.cross_entropy %logits, %targets : tensor<16x64xf32>, tensor<16xi32>
  // CHECK: gpt.cross_entropy %{{.*}}, %{{.*}} {ignore_index = -100 : i64} : tensor<16x64xf32>, tensor<16xi32>
  %loss2 = gpt.cross_entropy %logits, %targets {ignore_index = -100 : i64} : tensor<16x64xf32>, tensor<16xi32>
  // CHECK: gpt.reshape %{{.*}} to [-1] : tensor<16xi32>
  %flat = gpt.reshape %targets to [-1] : tensor<16xi32>
  // CHECK: gpt.gradients %{{.*}}, %{{.*}} wrt [%{{.*}}, %{{.*}}] : tensor<f32>, tensor<f32>, [tensor<64x16xbf16>, tensor<16x64xf32>]
  %g:2 = gpt.gradients %loss, %loss2 wrt [%wte, %logits] : tensor<f32>, tensor<f32>, [tensor<64x16xbf16>, tensor<16x64xf32>]
  return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @grads
func.func @grads(%q: tensor<2x8x4x8xbf16>, %k: tensor<2x8x2x8xbf16>, %seg: tensor<2x8xi32>,
                 %x: tensor<2x8x16xbf16>, %ids: tensor<2x8xi32>, %logits: tensor<16x64xf32>,
                 %targets: tensor<16xi32>, %dloss: tensor<f32>, %dh: tensor<2x8x32xbf16>) {
  // CHECK: gpt.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, segments %{{.*}} : tensor<2x8x4x8xbf16>, tensor<2x8x2x8xbf16>, tensor<2x8x2x8xbf16>, tensor<2x8x4x8xbf16>, tensor<2x8x4x8xbf16>, tensor<2x8xi32>
  %dq, %dk, %dv = gpt.attention_grad %q, %k, %k, %q, %q, segments %seg : tensor<2x8x4x8xbf16>, tensor<2x8x2x8xbf16>, tensor<2x8x2x8xbf16>, tensor<2x8x4x8xbf16>, tensor<2x8x4x8xbf16>, tensor<2x8xi32>
  // CHECK: gpt.rms_norm_grad %{{.*}}, %{{.*}} : tensor<2x8x16xbf16>, tensor<2x8x16xbf16>
  %dx = gpt.rms_norm_grad %x, %x : tensor<2x8x16xbf16>, tensor<2x8x16xbf16>
  // CHECK: gpt.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x64xf32>, tensor<16xi32>, tensor<f32>
  %dl = gpt.cross_entropy_grad %logits, %targets, %dloss : tensor<16x64xf32>, tensor<16xi32>, tensor<f32>
  // CHECK: gpt.embedding_grad %{{.*}}, %{{.*}}, vocab 64 : tensor<2x8xi32>, tensor<2x8x16xbf16>
  %dwte = gpt.embedding_grad %ids, %x, vocab 64 : tensor<2x8xi32>, tensor<2x8x16xbf16>
  // CHECK: gpt.rotary_grad %{{.*}}, positions %{{.*}} : tensor<2x8x4x8xbf16>, tensor<2x8xi32>
  %dr = gpt.rotary_grad %q, positions %seg : tensor<2x8x4x8xbf16>, tensor<2x8xi32>
  // CHECK: gpt.relu_square_grad %{{.*}}, %{{.*}} : tensor<2x8x32xbf16>, tensor<2x8x32xbf16>
  %da = gpt.relu_square_grad %dh, %dh : tensor<2x8x32xbf16>, tensor<2x8x32xbf16>
  // CHECK: gpt.softcap_grad %{{.*}}, %{{.*}} : tensor<2x8x32xbf16>, tensor<2x8x32xbf16>
  %ds = gpt.softcap_grad %dh, %dh : tensor<2x8x32xbf16>, tensor<2x8x32xbf16>
  // CHECK: gpt.matmul_weight_grad %{{.*}}, %{{.*}} : tensor<2x8x32xbf16>, tensor<2x8x16xbf16>
  %dw = gpt.matmul_weight_grad %dh, %x : tensor<2x8x32xbf16>, tensor<2x8x16xbf16>
  return
}

// CHECK-LABEL: func.func @optimizer_and_collectives
func.func @optimizer_and_collectives(%p: tensor<64x16xbf16>, %g: tensor<64x16xf32>,
                                     %lr: tensor<f32>, %t: tensor<f32>,
                                     %mp: tensor<32x16xf32>) {
  // CHECK: gpt.adamw_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x16xbf16>, tensor<64x16xf32>, tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<f32>, tensor<f32>
  %p1, %m1, %v1 = gpt.adamw_update %p, %g, %p, %p, %lr, %t : tensor<64x16xbf16>, tensor<64x16xf32>, tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<f32>, tensor<f32>
  // CHECK: gpt.adamw_update {{.*}} {weight_decay = 1.000000e-02 : f64}
  %p2, %m2, %v2 = gpt.adamw_update %p, %g, %p, %p, %lr, %t {weight_decay = 0.01 : f64} : tensor<64x16xbf16>, tensor<64x16xf32>, tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<f32>, tensor<f32>
  // CHECK: gpt.muon_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<f32>
  %mp1, %buf1 = gpt.muon_update %mp, %mp, %mp, %lr : tensor<32x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<f32>
  // CHECK: gpt.all_reduce avg %{{.*}} over "dp" : tensor<64x16xf32>
  %r = gpt.all_reduce avg %g over "dp" : tensor<64x16xf32>
  // CHECK: gpt.reduce_scatter sum %{{.*}} over "dp", size 4, dim 0 : tensor<64x16xf32>
  %s = gpt.reduce_scatter sum %g over "dp", size 4, dim 0 : tensor<64x16xf32>
  // CHECK: gpt.all_gather %{{.*}} over "dp", size 4, dim 0 : tensor<16x16xf32>
  %a = gpt.all_gather %s over "dp", size 4, dim 0 : tensor<16x16xf32>
  return
}

// CHECK-LABEL: func.func @fusion
// CHECK: %[[F:.*]] = gpt.fusion(%arg0, %arg1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[R:.*]] = gpt.relu_square %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = gpt.add %[[R]], %[[B]] : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT: gpt.yield %[[S]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @fusion(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %f = gpt.fusion(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %r = gpt.relu_square %a : tensor<4x8xf32>
    %s = gpt.add %r, %b : tensor<4x8xf32>, tensor<4x8xf32>
    gpt.yield %s : tensor<4x8xf32>
  }
  return %f : tensor<4x8xf32>
}
