// What the matmul, layout and optimizer generators refuse, naming the op: f32 is what they
// run; Muon runs as the interpreter does (Nesterov, 5 Newton-Schulz steps).
// (The remarks are gpt-plan-buffers' arena summaries.)
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu --verify-diagnostics

// expected-remark @below {{arena}}
func.func @f64_matmul(%x: tensor<4x8xf64> {gpt.name = "x"}, %w: tensor<3x8xf64> {gpt.name = "w"})
    -> (tensor<4x3xf64> {gpt.name = "y"}) {
  // expected-error @+1 {{'gpt.matmul' op gpt-lower-to-gpu: the matmul kernels run f32 only, got 'tensor<4x8xf64>'}}
  %y = gpt.matmul %x, %w : tensor<4x8xf64>, tensor<3x8xf64>
  return %y : tensor<4x3xf64>
}

// -----

// expected-remark @below {{arena}}
func.func @f64_transpose(%x: tensor<4x8xf64> {gpt.name = "x"}) -> (tensor<8x4xf64> {gpt.name = "y"}) {
  // expected-error @+1 {{'gpt.transpose' op gpt-lower-to-gpu: the transpose kernels run f32 only, got 'f64'}}
  %y = gpt.transpose %x [1, 0] : tensor<4x8xf64>
  return %y : tensor<8x4xf64>
}

// -----

// expected-remark @below {{arena}}
func.func @muon_steps(%p: tensor<8x8xf32> {gpt.name = "p"}, %g: tensor<8x8xf32> {gpt.name = "g"},
                      %b: tensor<8x8xf32> {gpt.name = "buf"}, %lr: tensor<f32> {gpt.name = "lr"})
    -> (tensor<8x8xf32> {gpt.name = "p"}, tensor<8x8xf32> {gpt.name = "buf"}) {
  // expected-error @+1 {{'gpt.muon_update' op gpt-lower-to-gpu: the Muon kernels run Nesterov Muon with 5 Newton-Schulz steps (as the interpreter), got nesterov=1, ns_steps=3}}
  %p1, %b1 = gpt.muon_update %p, %g, %b, %lr {ns_steps = 3 : i64} : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  return %p1, %b1 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// expected-remark @below {{arena}}
func.func @f64_adamw(%p: tensor<8xf64> {gpt.name = "p"}, %g: tensor<8xf64> {gpt.name = "g"},
                     %m: tensor<8xf64> {gpt.name = "m"}, %v: tensor<8xf64> {gpt.name = "v"},
                     %lr: tensor<f32> {gpt.name = "lr"}, %t: tensor<f32> {gpt.name = "step"})
    -> (tensor<8xf64> {gpt.name = "p"}, tensor<8xf64> {gpt.name = "m"}, tensor<8xf64> {gpt.name = "v"}) {
  // expected-error @+1 {{'gpt.adamw_update' op gpt-lower-to-gpu: the optimizer kernels run f32 parameters, state and scalars only, got 'tensor<8xf64>'}}
  %p1, %m1, %v1 = gpt.adamw_update %p, %g, %m, %v, %lr, %t : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<8xf64>, tensor<f32>, tensor<f32>
  return %p1, %m1, %v1 : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>
}
