// The KV-cache ops' shape rules and verifier: one diagnostic per constraint.
// RUN: gpt-opt %s --split-input-file --verify-diagnostics

func.func @concat_rank(%a: tensor<1x2x3xf32>, %b: tensor<1x2xf32>) {
  // expected-error @+1 {{gpt.concat: operands must share a rank > axis 1, got tensor<1x2x3xf32> and tensor<1x2xf32>}}
  %0 = gpt.concat %a, %b axis 1 : tensor<1x2x3xf32>, tensor<1x2xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<1x2xf32>, %b: tensor<1x2xf32>) {
  // expected-error @+1 {{gpt.concat: operands must share a rank > axis 2}}
  %0 = gpt.concat %a, %b axis 2 : tensor<1x2xf32>, tensor<1x2xf32>
  return
}

// -----

func.func @concat_other_dims(%a: tensor<1x2x4xf32>, %b: tensor<1x3x8xf32>) {
  // expected-error @+1 {{gpt.concat: dims other than axis 1 differ: tensor<1x2x4xf32> and tensor<1x3x8xf32>}}
  %0 = gpt.concat %a, %b axis 1 : tensor<1x2x4xf32>, tensor<1x3x8xf32>
  return
}

// -----

func.func @concat_dtype(%a: tensor<1x2xf32>, %b: tensor<1x2xf64>) {
  // expected-error @+1 {{gpt.concat: element types differ}}
  %0 = gpt.concat %a, %b axis 1 : tensor<1x2xf32>, tensor<1x2xf64>
  return
}

// -----

func.func @cached_attention_rank(%q: tensor<1x4x8xf32>, %k: tensor<1x3x2x8xf32>) {
  // expected-error @+1 {{gpt.cached_attention: q must be [B, Tq, H, D] and k, v [B, Tk, Hkv, D]}}
  %0 = gpt.cached_attention %q, %k, %k : tensor<1x4x8xf32>, tensor<1x3x2x8xf32>, tensor<1x3x2x8xf32>
  return
}

// -----

func.func @cached_attention_more_queries(%q: tensor<1x4x4x8xf32>, %k: tensor<1x3x2x8xf32>) {
  // expected-error @+1 {{gpt.cached_attention: more queries than keys (Tq=4 > Tk=3)}}
  %0 = gpt.cached_attention %q, %k, %k : tensor<1x4x4x8xf32>, tensor<1x3x2x8xf32>, tensor<1x3x2x8xf32>
  return
}

// -----

func.func @cached_attention_heads(%q: tensor<1x1x3x8xf32>, %k: tensor<1x3x2x8xf32>) {
  // expected-error @+1 {{gpt.cached_attention: query heads H=3 must be a multiple of kv heads Hkv=2}}
  %0 = gpt.cached_attention %q, %k, %k : tensor<1x1x3x8xf32>, tensor<1x3x2x8xf32>, tensor<1x3x2x8xf32>
  return
}

// -----

func.func @cached_attention_head_dim(%q: tensor<1x1x2x4xf32>, %k: tensor<1x3x2x8xf32>) {
  // expected-error @+1 {{gpt.cached_attention: q and k differ in B or D}}
  %0 = gpt.cached_attention %q, %k, %k : tensor<1x1x2x4xf32>, tensor<1x3x2x8xf32>, tensor<1x3x2x8xf32>
  return
}

// -----

func.func @cached_attention_kv(%q: tensor<1x1x2x8xf32>, %k: tensor<1x3x2x8xf32>, %v: tensor<1x4x2x8xf32>) {
  // expected-error @+1 {{gpt.cached_attention: k and v}}
  %0 = gpt.cached_attention %q, %k, %v : tensor<1x1x2x8xf32>, tensor<1x3x2x8xf32>, tensor<1x4x2x8xf32>
  return
}

// -----

func.func @cached_attention_scale(%q: tensor<1x1x2x8xf32>, %k: tensor<1x3x2x8xf32>) {
  // expected-error @+1 {{scale must be positive}}
  %0 = gpt.cached_attention %q, %k, %k {scale = -1.0 : f64} : tensor<1x1x2x8xf32>, tensor<1x3x2x8xf32>, tensor<1x3x2x8xf32>
  return
}
