// gpt-lower-to-cpu refuses, at the op, what the cpu driver's builtins cannot run (the
// functions are placed by hand: gpt.arena_bytes and gpt.offsets as gpt-plan-buffers writes them).
// RUN: gptc-opt %s --split-input-file --gpt-lower-to-cpu --verify-diagnostics

func.func @ignore_index(%y: tensor<8x32xf32> {gpt.name = "y"}, %t: tensor<8xi32> {gpt.name = "targets"})
    -> (tensor<f32> {gpt.name = "loss"}) attributes {gpt.arena_bytes = 64 : i64} {
  // expected-error @+1 {{the cpu target ignores target -1 only}}
  %l = gpt.cross_entropy %y, %t {ignore_index = 0 : i64, gpt.offsets = array<i64: 0>} : tensor<8x32xf32>, tensor<8xi32>
  return %l : tensor<f32>
}

// -----

func.func @bf16(%x: tensor<8x64xbf16> {gpt.name = "x"}) -> (tensor<8x64xbf16> {gpt.name = "y"})
    attributes {gpt.arena_bytes = 1024 : i64} {
  // expected-error @+1 {{the cpu target runs f32 and f64 tensors}}
  %y = gpt.rms_norm %x {eps = 1.0e-6 : f64, gpt.offsets = array<i64: 0>} : tensor<8x64xbf16>
  return %y : tensor<8x64xbf16>
}
