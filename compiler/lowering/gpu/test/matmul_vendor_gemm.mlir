// gpt-lower-to-gpu{gemm=vendor}: every product of matrices is the builtin gemm.f32
// (M, N, K, a_transposed, b_transposed, inputs_bf16, alpha, beta; a, b, c_in, c: runtime/device/
// GEMM_BUILTIN.md), the input gradient still reads the weight untransposed (b_transposed = 0), and
// what a matmul absorbed runs as "<kernel>_epilogue", an elementwise launch over the product.
// RUN: gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-fusions --gpt-lower-to-gpu="gemm=vendor" | FileCheck %s
// RUN: not gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu="gemm=fast" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: GPT_SFT_CUDA_GEMM=tiled gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --target=cuda \
// RUN:   --emit=launches 2>/dev/null | FileCheck %s --check-prefix=TILED
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --target=cuda --emit=launches 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=VENDOR
// RUN: not gptc --depth=1 --target=cuda --gemm=clblast --emit=launches 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --target=cuda --dtype=bfloat16 \
// RUN:   --emit=launches 2>/dev/null | FileCheck %s --check-prefix=BF16
// RUN: GPT_SFT_OPENCL_GEMM=cublaslt not gptc --depth=1 --target=opencl --emit=launches 2>&1 | FileCheck %s --check-prefix=ENV
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --target=opencl --gemm=clblast --emit=launches \
// RUN:   2>/dev/null | FileCheck %s --check-prefix=VENDOR

// BAD: gpt-lower-to-gpu: gemm must be tiled or vendor, got 'fast'
// FLAG: gptc: --gemm=clblast: the cuda target's gemm is cublaslt or tiled
// ENV: GPT_SFT_OPENCL_GEMM='cublaslt': the opencl target's gemm is clblast or tiled
// Under bf16 autocast every matmul and weight gradient reads bf16 buffers (bf16 storage), so
// it is gemm.bf16 (and says its inputs are bf16 values), and so are Muon's Newton-Schulz
// products (in bf16 as nanochat's: X, A and B in bf16 scratch), each followed by the epilogue
// that rounds its result (and adds a bf16 c_in itself: beta 0 for the builtin).
// BF16-LABEL: @micro_step
// BF16-NOT: builtin gemm.f32
// BF16: builtin gemm.bf16 (i64 128, i64 128, i64 128, i64 0, i64 1, i64 1, f64 1, f64 0,
// BF16-NOT: builtin gemm.f32
// The four [128, 128] attention matrices are one Muon group: each product one batched gemm
// (batch 4 first); the MLP's two matrices, of other shapes, are groups of one.
// BF16-LABEL: @optimizer_step
// BF16-NOT: builtin gemm{{.*}}.f32
// BF16: builtin gemm_batched.bf16 (i64 4, i64 128, i64 128, i64 128, i64 0, i64 1, i64 1, f64 1, f64 0, {{.*}}) <- gpt.muon_update
// BF16-NEXT: kernel {{.*}}epilogue
// BF16-NEXT: builtin gemm_batched.bf16 (i64 4, i64 128, i64 128, i64 128, i64 0, i64 0, i64 1, f64 2.0315, f64 0, {{.*}}) <- gpt.muon_update
// BF16-NEXT: kernel muon_poly_epilogue
// BF16: builtin gemm.bf16 (i64 128, i64 128, i64 512, i64 0, i64 1, i64 1, f64 1, f64 0, {{.*}}) <- gpt.muon_update
// BF16-NOT: builtin gemm{{.*}}.f32
// TILED-NOT: builtin gemm.f32
// TILED: kernel matmul_add
// VENDOR-NOT: kernel matmul_add
// VENDOR: builtin gemm.f32 (i64 128, i64 128, i64 128, i64 0, i64 1, i64 0, f64 1, f64 1,
// VENDOR-NOT: kernel matmul_add

// y = x w^T: M = 66, N = 32, K = 64, w stored [N, K] (b transposed), alpha 1, beta 0, c_in = c.
// CHECK-LABEL: func.func @plain
// CHECK-NOT: gpu.launch
// CHECK: gpt.call_builtin "gemm.f32"(%c66_i64, %c32_i64, %c64_i64, %c0_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %cst{{[_0-9]*}}, %cst{{[_0-9]*}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[C:[a-z0-9_]+]], %[[C]])
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @plain(%x: tensor<66x64xf32> {gpt.name = "x"}, %w: tensor<32x64xf32> {gpt.name = "w"})
    -> (tensor<66x32xf32> {gpt.name = "y"}) {
  %y = gpt.matmul %x, %w : tensor<66x64xf32>, tensor<32x64xf32>
  return %y : tensor<66x32xf32>
}

// dx = dy (w^T)^T reads w [96, 64] as B [K, N] as it is stored: b_transposed = 0.
// CHECK-LABEL: func.func @input_grad
// CHECK: gpt.call_builtin "gemm.f32"(%c66_i64, %c64_i64, %c96_i64, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}},
// CHECK-NOT: gpu.launch
func.func @input_grad(%dy: tensor<66x96xf32> {gpt.name = "dy"}, %w: tensor<96x64xf32> {gpt.name = "w"})
    -> (tensor<66x64xf32> {gpt.name = "dx"}) {
  %wt = gpt.transpose %w [1, 0] : tensor<96x64xf32>
  %dx = gpt.matmul %dy, %wt : tensor<66x96xf32>, tensor<64x96xf32>
  return %dx : tensor<66x64xf32>
}

// The residual add the matmul absorbs: the builtin's beta 1 with h as c_in, the sum written
// into r's buffer, no elementwise launch.
// CHECK-LABEL: func.func @residual
// CHECK: gpt.call_builtin "gemm.f32"({{.*}}, %cst{{[_0-9]*}}, %cst{{[_0-9]*}}, %{{.*}}, %{{.*}}, %[[H:[a-z0-9_]+]], %[[R:[a-z0-9_]+]])
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @residual(%x: tensor<66x64xf32> {gpt.name = "x"}, %w: tensor<32x64xf32> {gpt.name = "w"},
                    %h: tensor<66x32xf32> {gpt.name = "h"}) -> (tensor<66x32xf32> {gpt.name = "r"}) {
  %y = gpt.matmul %x, %w : tensor<66x64xf32>, tensor<32x64xf32>
  %r = gpt.add %h, %y : tensor<66x32xf32>, tensor<66x32xf32>
  return %r : tensor<66x32xf32>
}

// The weight gradient accumulated into its argument: dw [N = 96, K = 64] = dy^T x over the 66
// tokens, a transposed, accumulated by the builtin itself (beta 1, c_in = c = the gradient).
// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: %[[ACC:[a-z0-9]+]]: memref<96x64xf32> {gpt.name = "grad/w"}
// CHECK: %[[C:.*]] = memref.reinterpret_cast %[[ACC]]
// CHECK: %[[CIN:.*]] = memref.reinterpret_cast %[[ACC]]
// CHECK: gpt.call_builtin "gemm.f32"(%c96_i64, %c64_i64, %c66_i64, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, {{.*}}, %[[CIN]], %[[C]])
// CHECK-NOT: gpu.launch
func.func @accumulate(%dy: tensor<66x96xf32> {gpt.name = "dy"}, %x: tensor<66x64xf32> {gpt.name = "x"},
                      %acc: tensor<96x64xf32> {gpt.name = "grad/w"}) -> (tensor<96x64xf32> {gpt.name = "grad/w"}) {
  %dw = gpt.matmul_weight_grad %dy, %x : tensor<66x96xf32>, tensor<66x64xf32>
  %a = gpt.add %acc, %dw : tensor<96x64xf32>, tensor<96x64xf32>
  return %a : tensor<96x64xf32>
}
