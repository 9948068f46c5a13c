// Result types come from each op's shape rule; the generic form prints them.
// RUN: gpt-opt %s --mlir-print-op-generic | FileCheck %s

func.func @shapes(%wte: tensor<64x16xbf16>, %ids: tensor<2x8xi32>, %w: tensor<32x16xbf16>,
                  %dyn: tensor<?x8x16xbf16>, %wd: tensor<32x?xbf16>, %f: tensor<2x8x64xf32>,
                  %g: tensor<64x16xf32>, %fd: tensor<?x8x64xf32>, %tg: tensor<16xi32>, %q: tensor<2x8x4x8xf32>, %k: tensor<2x8x2x8xf32>) {
  // CHECK: "gpt.embedding"{{.*}} -> tensor<2x8x16xbf16>
  %x = gpt.embedding %wte[%ids] : tensor<64x16xbf16>, tensor<2x8xi32>
  // CHECK: "gpt.matmul"{{.*}} -> tensor<2x8x32xbf16>
  %h = gpt.matmul %x, %w : tensor<2x8x16xbf16>, tensor<32x16xbf16>
  // Dynamic dims flow through: [?, 8, 16] x [32, ?] -> [?, 8, 32].
  // CHECK: "gpt.matmul"{{.*}} -> tensor<?x8x32xbf16>
  %hd = gpt.matmul %dyn, %wd : tensor<?x8x16xbf16>, tensor<32x?xbf16>
  // A dynamic dim merges with a static one to the static size.
  // CHECK: "gpt.add"{{.*}} -> tensor<2x8x16xbf16>
  %s = gpt.add %dyn, %x : tensor<?x8x16xbf16>, tensor<2x8x16xbf16>
  // round_bf16 keeps the type, dynamic dims included.
  // CHECK: "gpt.round_bf16"{{.*}} -> tensor<?x8x64xf32>
  %rb = gpt.round_bf16 %fd : tensor<?x8x64xf32>
  // CHECK: "gpt.reshape"{{.*}} -> tensor<16x64xf32>
  %r = gpt.reshape %f to [-1, 64] : tensor<2x8x64xf32>
  // CHECK: "gpt.reshape"{{.*}} -> tensor<?x16xbf16>
  %rd = gpt.reshape %dyn to [-1, 16] : tensor<?x8x16xbf16>
  // CHECK: "gpt.transpose"{{.*}} -> tensor<16x32xbf16>
  %t = gpt.transpose %w [1, 0] : tensor<32x16xbf16>
  // CHECK: "gpt.transpose"{{.*}} -> tensor<2x4x8x8xf32>
  %tq = gpt.transpose %q [0, 2, 1, 3] : tensor<2x8x4x8xf32>
  // CHECK: "gpt.attention"{{.*}} -> tensor<2x8x4x8xf32>
  %o = gpt.attention %q, %k, %k : tensor<2x8x4x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x2x8xf32>
  // CHECK: "gpt.attention_grad"{{.*}} -> (tensor<2x8x4x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x2x8xf32>)
  %dq, %dk, %dv = gpt.attention_grad %q, %k, %k, %o, %o : tensor<2x8x4x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>
  // CHECK: "gpt.cross_entropy"{{.*}} -> tensor<f32>
  %loss = gpt.cross_entropy %r, %tg : tensor<16x64xf32>, tensor<16xi32>
  // CHECK: "gpt.reshape"{{.*}} -> tensor<16xi32>
  %ti = gpt.reshape %ids to [-1] : tensor<2x8xi32>
  // CHECK: "gpt.gradients"{{.*}} -> (tensor<32x16xbf16>, tensor<?x8x16xbf16>)
  %gr:2 = gpt.gradients %loss, %loss wrt [%w, %dyn] : tensor<f32>, tensor<f32>, [tensor<32x16xbf16>, tensor<?x8x16xbf16>]
  // CHECK: "gpt.embedding_grad"{{.*}} -> tensor<64x16xbf16>
  %dwte = gpt.embedding_grad %ids, %x, vocab 64 : tensor<2x8xi32>, tensor<2x8x16xbf16>
  // CHECK: "gpt.matmul_weight_grad"{{.*}} -> tensor<32x16xbf16>
  %dw = gpt.matmul_weight_grad %h, %x : tensor<2x8x32xbf16>, tensor<2x8x16xbf16>
  // CHECK: "gpt.reduce_scatter"{{.*}} -> tensor<16x16xf32>
  %rs = gpt.reduce_scatter avg %g over "dp", size 4, dim 0 : tensor<64x16xf32>
  // CHECK: "gpt.all_gather"{{.*}} -> tensor<64x64xf32>
  %ag = gpt.all_gather %g over "dp", size 4, dim 1 : tensor<64x16xf32>
  return
}
