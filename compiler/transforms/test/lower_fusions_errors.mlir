// What gpt-lower-fusions refuses, naming the op: nothing is left half-lowered.
// RUN: gptc-opt %s --gpt-lower-fusions --verify-diagnostics

func.func @mixed_shapes(%a: tensor<4xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'gpt.fusion' op gpt-lower-fusions: inputs and results must share one static float tensor type}}
  %r = gpt.fusion (%a, %b) : (tensor<4xf32>, tensor<8xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<8xf32>):
    %0 = gpt.relu_square %x : tensor<4xf32>
    gpt.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
