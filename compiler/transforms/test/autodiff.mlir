// gpt-autodiff replaces gpt.gradients with the VJP rules of the ops between the loss and
// the values, last op first, summing the cotangents of a value used twice.
// RUN: gptc-opt %s --gpt-autodiff | FileCheck %s

// CHECK-LABEL: func.func @mlp_loss
// CHECK-NOT: gpt.gradients
func.func @mlp_loss(%w1: tensor<32x16xf32>, %w2: tensor<8x32xf32>, %x: tensor<4x16xf32>,
                    %t: tensor<4xi32>) -> (tensor<f32>, tensor<32x16xf32>, tensor<8x32xf32>) {
  // The forward is kept as written.
  // CHECK: %[[H:.*]] = gpt.matmul %arg2, %arg0
  // CHECK: %[[A:.*]] = gpt.relu_square %[[H]]
  // CHECK: %[[L:.*]] = gpt.matmul %[[A]], %arg1
  // CHECK: %[[LOSS:.*]] = gpt.cross_entropy %[[L]], %arg3
  %h = gpt.matmul %x, %w1 : tensor<4x16xf32>, tensor<32x16xf32>
  %a = gpt.relu_square %h : tensor<4x32xf32>
  %l = gpt.matmul %a, %w2 : tensor<4x32xf32>, tensor<8x32xf32>
  %loss = gpt.cross_entropy %l, %t : tensor<4x8xf32>, tensor<4xi32>
  %seed = arith.constant dense<5.000000e-01> : tensor<f32>
  // Backward, last op first; the seed is the loss's cotangent.
  // CHECK: %[[SEED:.*]] = arith.constant dense<5.000000e-01>
  // CHECK: %[[DL:.*]] = gpt.cross_entropy_grad %[[L]], %arg3, %[[SEED]]
  // CHECK: gpt.transpose %arg1 [1, 0]
  // CHECK: %[[DA:.*]] = gpt.matmul %[[DL]]
  // CHECK: %[[DW2:.*]] = gpt.matmul_weight_grad %[[DL]], %[[A]]
  // CHECK: %[[DH:.*]] = gpt.relu_square_grad %[[H]], %[[DA]]
  // x is not in wrt, so only the weight side of the first matmul is built.
  // CHECK-NOT: gpt.transpose %arg0
  // CHECK: %[[DW1:.*]] = gpt.matmul_weight_grad %[[DH]], %arg2
  // CHECK: return %[[LOSS]], %[[DW1]], %[[DW2]]
  %g:2 = gpt.gradients %loss, %seed wrt [%w1, %w2]
      : tensor<f32>, tensor<f32>, [tensor<32x16xf32>, tensor<8x32xf32>]
  return %loss, %g#0, %g#1 : tensor<f32>, tensor<32x16xf32>, tensor<8x32xf32>
}

// CHECK-LABEL: func.func @shared_weight
func.func @shared_weight(%w: tensor<8x8xf32>, %x: tensor<4x8xf32>, %t: tensor<4xi32>)
    -> tensor<8x8xf32> {
  // %w is read by two matmuls: its cotangent is the sum of both rules' results.
  %h = gpt.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %l = gpt.matmul %h, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %loss = gpt.cross_entropy %l, %t : tensor<4x8xf32>, tensor<4xi32>
  %one = arith.constant dense<1.000000e+00> : tensor<f32>
  // CHECK: %[[G2:.*]] = gpt.matmul_weight_grad %{{.*}}, %[[H:.*]] :
  // CHECK: %[[G1:.*]] = gpt.matmul_weight_grad
  // CHECK: %[[SUM:.*]] = gpt.add %[[G2]], %[[G1]]
  // CHECK: return %[[SUM]]
  %g = gpt.gradients %loss, %one wrt [%w] : tensor<f32>, tensor<f32>, [tensor<8x8xf32>]
  return %g : tensor<8x8xf32>
}

// CHECK-LABEL: func.func @unused_value
func.func @unused_value(%w: tensor<4x8xf32>, %unused: tensor<3x3xf32>, %x: tensor<2x8xf32>,
                        %t: tensor<2xi32>) -> tensor<3x3xf32> {
  // A value the loss does not depend on gets a zero gradient.
  // CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<3x3xf32>
  // CHECK: return %[[Z]]
  %l = gpt.matmul %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  %loss = gpt.cross_entropy %l, %t : tensor<2x4xf32>, tensor<2xi32>
  %one = arith.constant dense<1.000000e+00> : tensor<f32>
  %g:2 = gpt.gradients %loss, %one wrt [%w, %unused]
      : tensor<f32>, tensor<f32>, [tensor<4x8xf32>, tensor<3x3xf32>]
  return %g#1 : tensor<3x3xf32>
}
