// What gpt-autodiff refuses, with the op and the reason.
// RUN: gptc-opt %s --gpt-autodiff --split-input-file --verify-diagnostics

func.func @no_rule(%w: tensor<4x8xf32>, %x: tensor<2x8xf32>, %t: tensor<2xi32>) -> tensor<4x8xf32> {
  %l = gpt.matmul %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  // expected-error @+1 {{'arith.negf' op lies between a value of gpt.gradients' wrt and its loss but has no VJP rule (VjpOpInterface)}}
  %n = arith.negf %l : tensor<2x4xf32>
  %loss = gpt.cross_entropy %n, %t : tensor<2x4xf32>, tensor<2xi32>
  %one = arith.constant dense<1.000000e+00> : tensor<f32>
  %g = gpt.gradients %loss, %one wrt [%w] : tensor<f32>, tensor<f32>, [tensor<4x8xf32>]
  return %g : tensor<4x8xf32>
}

// -----

func.func @dynamic_unused(%w: tensor<4x8xf32>, %u: tensor<?x3xf32>, %x: tensor<2x8xf32>,
                          %t: tensor<2xi32>) -> tensor<?x3xf32> {
  %l = gpt.matmul %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  %loss = gpt.cross_entropy %l, %t : tensor<2x4xf32>, tensor<2xi32>
  %one = arith.constant dense<1.000000e+00> : tensor<f32>
  // expected-error @+1 {{the loss does not depend on wrt #1 and its type 'tensor<?x3xf32>' is dynamic}}
  %g:2 = gpt.gradients %loss, %one wrt [%w, %u] : tensor<f32>, tensor<f32>, [tensor<4x8xf32>, tensor<?x3xf32>]
  return %g#1 : tensor<?x3xf32>
}
