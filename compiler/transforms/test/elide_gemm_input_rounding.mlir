// gpt-elide-gemm-input-rounding: under bf16 autocast, a gpt.round_bf16 that only bf16 GEMMs
// read (directly or through transposes and reshapes) is dropped, the GEMMs reading its input
// (the cpu driver's bf16 GEMMs round their inputs themselves); any other reader keeps it.
// RUN: gptc-opt %s --split-input-file --gpt-elide-gemm-input-rounding | FileCheck %s
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=640 --batch=2 --seq=64 --dtype=bfloat16 --emit=fused --function=micro_step | FileCheck %s --check-prefix=STEP
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=640 --batch=2 --seq=64 --dtype=bfloat16 --emit=fused --function=micro_step --target=opencl | FileCheck %s --check-prefix=GPU

// The weight (read by the forward matmul and, transposed, the backward's) and the activation
// (read by a matmul and a weight gradient, one through a reshape) lose their roundings.
// CHECK-LABEL: func.func @gemm_readers
// CHECK-NOT: gpt.round_bf16
// CHECK: %[[Y:.*]] = gpt.matmul %arg0, %arg1
// CHECK: %[[WT:.*]] = gpt.transpose %arg1 [1, 0]
// CHECK: gpt.matmul %arg2, %[[WT]]
// CHECK: %[[XR:.*]] = gpt.reshape %arg0
// CHECK: gpt.matmul_weight_grad %arg2, %[[XR]]
module attributes {gpt.autocast = "bf16"} {
  func.func @gemm_readers(%x: tensor<4x8xf32>, %w: tensor<6x8xf32>, %dy: tensor<4x6xf32>)
      -> (tensor<4x6xf32>, tensor<4x8xf32>, tensor<6x8xf32>) {
    %xb = gpt.round_bf16 %x : tensor<4x8xf32>
    %wb = gpt.round_bf16 %w : tensor<6x8xf32>
    %y = gpt.matmul %xb, %wb : tensor<4x8xf32>, tensor<6x8xf32>
    %wt = gpt.transpose %wb [1, 0] : tensor<6x8xf32>
    %dx = gpt.matmul %dy, %wt : tensor<4x6xf32>, tensor<8x6xf32>
    %xr = gpt.reshape %xb to [4, 8] : tensor<4x8xf32>
    %dw = gpt.matmul_weight_grad %dy, %xr : tensor<4x6xf32>, tensor<4x8xf32>
    return %y, %dx, %dw : tensor<4x6xf32>, tensor<4x8xf32>, tensor<6x8xf32>
  }
}

// -----

// A rounding another op reads (an add; a transpose whose result is returned) stays.
// CHECK-LABEL: func.func @other_readers
// CHECK: %[[A:.*]] = gpt.round_bf16 %arg0
// CHECK: %[[B:.*]] = gpt.round_bf16 %arg1
// CHECK: gpt.matmul %[[A]], %[[B]]
// CHECK: gpt.add %[[A]], %[[A]]
// CHECK: gpt.transpose %[[B]]
module attributes {gpt.autocast = "bf16"} {
  func.func @other_readers(%x: tensor<4x8xf32>, %w: tensor<6x8xf32>)
      -> (tensor<4x6xf32>, tensor<4x8xf32>, tensor<8x6xf32>) {
    %xb = gpt.round_bf16 %x : tensor<4x8xf32>
    %wb = gpt.round_bf16 %w : tensor<6x8xf32>
    %y = gpt.matmul %xb, %wb : tensor<4x8xf32>, tensor<6x8xf32>
    %s = gpt.add %xb, %xb : tensor<4x8xf32>, tensor<4x8xf32>
    %wt = gpt.transpose %wb [1, 0] : tensor<6x8xf32>
    return %y, %s, %wt : tensor<4x6xf32>, tensor<4x8xf32>, tensor<8x6xf32>
  }
}

// -----

// Without bf16 autocast the matmuls are f32 ones, which do not round: the rounding stays.
// CHECK-LABEL: func.func @no_autocast
// CHECK: %[[A:.*]] = gpt.round_bf16 %arg0
// CHECK: gpt.matmul %[[A]], %arg1
func.func @no_autocast(%x: tensor<4x8xf32>, %w: tensor<6x8xf32>) -> tensor<4x6xf32> {
  %xb = gpt.round_bf16 %x : tensor<4x8xf32>
  %y = gpt.matmul %xb, %w : tensor<4x8xf32>, tensor<6x8xf32>
  return %y : tensor<4x6xf32>
}

// The bf16 step for the cpu target: no weight is rounded before its matmuls any more (the
// first fusion reads the embedding's output, not a weight argument), and the bf16 softcap
// with its roundings stays out of fusions for the cpu lowering (see lower_to_cpu.mlir).
// STEP-LABEL: func.func @micro_step
// STEP-NOT: gpt.fusion(%arg{{[0-9]+}}) : (tensor<{{[0-9]+}}x{{[0-9]+}}xf32>) -> tensor
// STEP: %[[R:.*]] = gpt.round_bf16 %{{.*}} : tensor<2x64x640xf32>
// STEP-NEXT: gpt.softcap %[[R]] {round_bf16}
// STEP: gpt.cross_entropy_grad
// STEP: gpt.round_bf16
// STEP-NEXT: gpt.softcap_grad
// The GPU targets keep every rounding (their GEMMs do not round) and fuse the softcap.
// GPU-LABEL: func.func @micro_step
// GPU: gpt.fusion(%arg{{[0-9]+}}) : (tensor<{{[0-9]+}}x{{[0-9]+}}xf32>) -> tensor
// GPU: %[[R:.*]] = gpt.round_bf16 %{{.*}} : tensor<2x64x640xf32>
// GPU-NEXT: gpt.softcap %[[R]] {round_bf16}
