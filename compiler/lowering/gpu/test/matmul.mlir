// gpt-lower-to-gpu, matmul family: gpt.matmul and gpt.matmul_weight_grad are one tiled gemm
// launch each (64 x 64 tiles of C per workgroup of 256 work-items, K in slices of 16 staged
// in two workgroup buffers between barriers, a 4 x 4 register block per work-item, 16 fused
// multiply-adds per slice step), edges masked; the input gradient's transposed weight is
// read in place (no transpose kernel); the elementwise consumer is absorbed into the epilogue.
// RUN: gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-fusions --gpt-lower-to-gpu | FileCheck %s
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --packed --target=opencl --emit=gpu \
// RUN:   | FileCheck %s --check-prefix=STEP

// The whole step: the forward's residual adds and the lm_head's softcap ride on their
// matmuls, the backward transposes no weight, every weight gradient is accumulated into its
// argument by its gemm (the embedding's, a scatter-add, keeps its add).
// STEP-LABEL: func.func @micro_step
// STEP-NOT: @kernels::@transpose
// STEP: @kernels::@matmul_add
// STEP: @kernels::@matmul_relu_square
// STEP: @kernels::@matmul_add
// STEP: @kernels::@matmul_softcap
// STEP-COUNT-7: @kernels::@matmul_weight_grad_add
// STEP-NOT: @kernels::@transpose
// STEP: @kernels::@embedding_grad_sum
// STEP: @kernels::@add
// STEP-NOT: @kernels::@matmul
// STEP: return

// M = 70, N = 45, K = 29: grid (1, 2), one K slice of 16 and one partial one.
// CHECK-LABEL: func.func @off_tiles
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c2{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) workgroup(%[[AS:.*]] : memref<1024xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<1024xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c29{{.*}} step %c16{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: memref.store %{{.*}}, %[[AS]][%{{.*}}] : memref<1024xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: memref.store %{{.*}}, %[[BS]][%{{.*}}] : memref<1024xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-256: math.fma
// CHECK: scf.yield
// Sixteen guarded stores of C.
// CHECK-COUNT-16: scf.if
// CHECK: } {gpt.kernel_name = "matmul", gpt.op = "gpt.matmul"}
func.func @off_tiles(%x: tensor<70x29xf32> {gpt.name = "x"}, %w: tensor<45x29xf32> {gpt.name = "w"})
    -> (tensor<70x45xf32> {gpt.name = "y"}) {
  %y = gpt.matmul %x, %w : tensor<70x29xf32>, tensor<45x29xf32>
  return %y : tensor<70x45xf32>
}

// dx = dy (w^T)^T: the gemm reads the argument w [96, 64] itself; no transpose kernel runs.
// CHECK-LABEL: func.func @input_grad
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<96x64xf32> {gpt.name = "w"}
// CHECK-NOT: gpu.launch
// CHECK: %[[WF:.*]] = memref.reinterpret_cast %[[W]] to offset: [0], sizes: [6144], strides: [1]
// CHECK: gpu.launch
// CHECK: memref.load %[[WF]]
// CHECK: } {gpt.kernel_name = "matmul", gpt.op = "gpt.matmul"}
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @input_grad(%dy: tensor<66x96xf32> {gpt.name = "dy"}, %w: tensor<96x64xf32> {gpt.name = "w"})
    -> (tensor<66x64xf32> {gpt.name = "dx"}) {
  %wt = gpt.transpose %w [1, 0] : tensor<96x64xf32>
  %dx = gpt.matmul %dy, %wt : tensor<66x96xf32>, tensor<64x96xf32>
  return %dx : tensor<66x64xf32>
}

// The residual add right after the matmul is the gemm's beta 1 with h as C_in: C is not
// stored, acc + h is.
// CHECK-LABEL: func.func @residual
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK-NEXT: arith.muli
// CHECK-NEXT: %[[AT:.*]] = arith.addi
// CHECK-NEXT: %[[H:.*]] = memref.load %{{.*}}[%[[AT]]] : memref<2112xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %{{.*}}#0, %[[H]] : f32
// CHECK-NEXT: memref.store %[[S]], %{{.*}}[%[[AT]]] : memref<2112xf32>
// CHECK: } {gpt.kernel_name = "matmul_add", gpt.op = "gpt.matmul"}
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @residual(%x: tensor<66x64xf32> {gpt.name = "x"}, %w: tensor<32x64xf32> {gpt.name = "w"},
                    %h: tensor<66x32xf32> {gpt.name = "h"}) -> (tensor<66x32xf32> {gpt.name = "r"}) {
  %y = gpt.matmul %x, %w : tensor<66x64xf32>, tensor<32x64xf32>
  %r = gpt.add %h, %y : tensor<66x32xf32>, tensor<66x32xf32>
  return %r : tensor<66x32xf32>
}

// The result read again later (relu_square_grad's input) is stored beside the absorbed op's.
// CHECK-LABEL: func.func @stored_too
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: memref.store %{{.*}}#0, %{{.*}}[%[[AT:.*]]] : memref<2112xf32>
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[AT]]] : memref<2112xf32>
// CHECK: } {gpt.kernel_name = "matmul_relu_square", gpt.op = "gpt.matmul"}
// CHECK: gpt.kernel_name = "relu_square_grad"
func.func @stored_too(%x: tensor<66x64xf32> {gpt.name = "x"}, %w: tensor<32x64xf32> {gpt.name = "w"},
                      %d: tensor<66x32xf32> {gpt.name = "d"})
    -> (tensor<66x32xf32> {gpt.name = "a"}, tensor<66x32xf32> {gpt.name = "g"}) {
  %y = gpt.matmul %x, %w : tensor<66x64xf32>, tensor<32x64xf32>
  %a = gpt.relu_square %y : tensor<66x32xf32>
  %g = gpt.relu_square_grad %y, %d : tensor<66x32xf32>, tensor<66x32xf32>
  return %a, %g : tensor<66x32xf32>, tensor<66x32xf32>
}

// dw = dy^T x over the 2 x 33 tokens, accumulated into its donated argument in the epilogue
// though other kernels run between; the consumer of dx, behind the weight gradient, is not
// absorbed (only placement ops may stand between a matmul and what it absorbs).
// CHECK-LABEL: func.func @backward
// CHECK-SAME: %[[ACC:[a-z0-9]+]]: memref<96x64xf32> {gpt.name = "grad/w"}
// CHECK: %[[ACCF:.*]] = memref.reinterpret_cast %[[ACC]] to offset: [0], sizes: [6144], strides: [1]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c2{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c66{{.*}} step %c16
// CHECK: %[[OLD:.*]] = memref.load %[[ACCF]][%[[AT:.*]]] : memref<6144xf32>
// CHECK-NEXT: %[[NEW:.*]] = arith.addf %{{.*}}#0, %[[OLD]] : f32
// CHECK-NEXT: memref.store %[[NEW]], %[[ACCF]][%[[AT]]] : memref<6144xf32>
// CHECK: } {gpt.kernel_name = "matmul_weight_grad_add", gpt.op = "gpt.matmul_weight_grad"}
// CHECK: } {gpt.kernel_name = "matmul", gpt.op = "gpt.matmul"}
// CHECK: } {gpt.kernel_name = "softcap", gpt.op = "gpt.softcap"}
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @backward(%dy: tensor<2x33x96xf32> {gpt.name = "dy"}, %x: tensor<2x33x64xf32> {gpt.name = "x"},
                    %w: tensor<96x64xf32> {gpt.name = "w"}, %acc: tensor<96x64xf32> {gpt.name = "grad/w"})
    -> (tensor<2x33x64xf32> {gpt.name = "dx"}, tensor<96x64xf32> {gpt.name = "grad/w"}) {
  %dw = gpt.matmul_weight_grad %dy, %x : tensor<2x33x96xf32>, tensor<2x33x64xf32>
  %wt = gpt.transpose %w [1, 0] : tensor<96x64xf32>
  %dx = gpt.matmul %dy, %wt : tensor<2x33x96xf32>, tensor<64x96xf32>
  %d = gpt.mul %dy, %dy : tensor<2x33x96xf32>, tensor<2x33x96xf32>
  %s = gpt.softcap %dx {cap = 15.0 : f64} : tensor<2x33x64xf32>
  %a = gpt.add %acc, %dw : tensor<96x64xf32>, tensor<96x64xf32>
  return %s, %a : tensor<2x33x64xf32>, tensor<96x64xf32>
}
