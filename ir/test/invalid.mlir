// Bad shapes and attributes are diagnostics that name the op and the types.
// RUN: gpt-opt %s --split-input-file --verify-diagnostics

func.func @matmul_k(%x: tensor<2x16xf32>, %w: tensor<32x8xf32>) {
  // expected-error @+1 {{gpt.matmul: contraction dims differ: x tensor<2x16xf32> has K=16, w tensor<32x8xf32> has K=8}}
  %0 = gpt.matmul %x, %w : tensor<2x16xf32>, tensor<32x8xf32>
  return
}

// -----

func.func @matmul_dtype(%x: tensor<2x16xf32>, %w: tensor<32x16xbf16>) {
  // expected-error @+1 {{gpt.matmul: element types differ}}
  %0 = gpt.matmul %x, %w : tensor<2x16xf32>, tensor<32x16xbf16>
  return
}

// -----

func.func @embedding_table(%t: tensor<64xf32>, %ids: tensor<4xi32>) {
  // expected-error @+1 {{gpt.embedding: table must be [V, C]}}
  %0 = gpt.embedding %t[%ids] : tensor<64xf32>, tensor<4xi32>
  return
}

// -----

func.func @embedding_ids_type(%t: tensor<64x8xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer values}}
  %0 = "gpt.embedding"(%t, %ids) : (tensor<64x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return
}

// -----

func.func @f16_rejected(%x: tensor<4x8xf16>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 64-bit float or bfloat16 type values}}
  %0 = "gpt.rms_norm"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return
}

// -----

func.func @rms_norm_eps(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{eps must be positive}}
  %0 = gpt.rms_norm %x {eps = 0.0 : f64} : tensor<4x8xf32>
  return
}

// -----

func.func @rotary_rank(%x: tensor<2x8x8xf32>) {
  // expected-error @+1 {{gpt.rotary: x must be [B, T, H, D]}}
  %0 = gpt.rotary %x : tensor<2x8x8xf32>
  return
}

// -----

func.func @rotary_odd_d(%x: tensor<2x8x4x7xf32>) {
  // expected-error @+1 {{head dim D must be even}}
  %0 = gpt.rotary %x : tensor<2x8x4x7xf32>
  return
}

// -----

func.func @rotary_round_bf16_f64(%x: tensor<2x8x4x8xf64>) {
  // expected-error @+1 {{round_bf16 needs f32 elements, got 'tensor<2x8x4x8xf64>'}}
  %0 = gpt.rotary %x {round_bf16} : tensor<2x8x4x8xf64>
  return
}

// -----

func.func @rotary_grad_round_bf16_f64(%x: tensor<2x8x4x8xf64>) {
  // expected-error @+1 {{round_bf16 needs f32 elements}}
  %0 = gpt.rotary_grad %x {round_bf16} : tensor<2x8x4x8xf64>
  return
}

// -----

func.func @rotary_positions(%x: tensor<2x8x4x8xf32>, %p: tensor<2x9xi32>) {
  // expected-error @+1 {{positions must be [B, T]}}
  %0 = gpt.rotary %x, positions %p : tensor<2x8x4x8xf32>, tensor<2x9xi32>
  return
}

// -----

func.func @attention_gqa(%q: tensor<2x8x6x8xf32>, %k: tensor<2x8x4x8xf32>) {
  // expected-error @+1 {{query heads H=6 must be a multiple of kv heads Hkv=4}}
  %0 = gpt.attention %q, %k, %k : tensor<2x8x6x8xf32>, tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>
  return
}

// -----

func.func @attention_kv(%q: tensor<2x8x4x8xf32>, %k: tensor<2x8x2x8xf32>, %v: tensor<2x8x1x8xf32>) {
  // expected-error @+1 {{k and v must have one shape}}
  %0 = gpt.attention %q, %k, %v : tensor<2x8x4x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x1x8xf32>
  return
}

// -----

func.func @attention_segments(%q: tensor<2x8x4x8xf32>, %s: tensor<8xi32>) {
  // expected-error @+1 {{segment_ids must be [B, T]}}
  %0 = gpt.attention %q, %q, %q, segments %s : tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>, tensor<8xi32>
  return
}

// -----

func.func @attention_scale(%q: tensor<2x8x4x8xf32>) {
  // expected-error @+1 {{scale must be positive}}
  %0 = gpt.attention %q, %q, %q {scale = -1.0 : f64} : tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>
  return
}

// -----

func.func @round_bf16_f64(%x: tensor<4xf64>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float values}}
  %0 = gpt.round_bf16 %x : tensor<4xf64>
  return
}

// -----

func.func @softcap_round_bf16_f64(%x: tensor<4xf64>) {
  // expected-error @+1 {{round_bf16 needs f32 elements, got 'tensor<4xf64>'}}
  %0 = gpt.softcap %x {round_bf16} : tensor<4xf64>
  return
}

// -----

func.func @softcap_cap(%x: tensor<4xf32>) {
  // expected-error @+1 {{cap must be positive}}
  %0 = gpt.softcap %x {cap = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @add_shapes(%a: tensor<4x8xf32>, %b: tensor<4x9xf32>) {
  // expected-error @+1 {{gpt.add: lhs and rhs must have one shape, got tensor<4x8xf32> and tensor<4x9xf32>}}
  %0 = gpt.add %a, %b : tensor<4x8xf32>, tensor<4x9xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{cannot reshape tensor<4x8xf32> (32 elements) to [5, 6]}}
  %0 = gpt.reshape %x to [5, 6] : tensor<4x8xf32>
  return
}

// -----

func.func @reshape_two_inferred(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{may hold sizes >= 0 and one -1}}
  %0 = gpt.reshape %x to [-1, -1] : tensor<4x8xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{perm [0, 0] is not a permutation of the dims of tensor<4x8xf32>}}
  %0 = gpt.transpose %x [0, 0] : tensor<4x8xf32>
  return
}

// -----

func.func @cross_entropy_n(%l: tensor<16x64xf32>, %t: tensor<15xi32>) {
  // expected-error @+1 {{expected logits [N, V] and targets [N]}}
  %0 = gpt.cross_entropy %l, %t : tensor<16x64xf32>, tensor<15xi32>
  return
}

// -----

func.func @cross_entropy_grad_dloss(%l: tensor<16x64xf32>, %t: tensor<16xi32>, %d: tensor<1xf32>) {
  // expected-error @+1 {{dloss must be rank 0}}
  %0 = gpt.cross_entropy_grad %l, %t, %d : tensor<16x64xf32>, tensor<16xi32>, tensor<1xf32>
  return
}

// -----

func.func @embedding_grad_vocab(%ids: tensor<4xi32>, %dy: tensor<4x8xf32>) {
  // expected-error @+1 {{vocab_size must be positive}}
  %0 = gpt.embedding_grad %ids, %dy, vocab 0 : tensor<4xi32>, tensor<4x8xf32>
  return
}

// -----

func.func @adamw_shapes(%p: tensor<4x8xf32>, %g: tensor<4x9xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{gpt.adamw_update: param and grad must have one shape}}
  %0:3 = gpt.adamw_update %p, %g, %p, %p, %lr, %lr : tensor<4x8xf32>, tensor<4x9xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<f32>
  return
}

// -----

func.func @adamw_beta(%p: tensor<4x8xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{betas must lie in [0, 1)}}
  %0:3 = gpt.adamw_update %p, %p, %p, %p, %lr, %lr {beta1 = 1.0 : f64} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<f32>
  return
}

// -----

func.func @muon_rank(%p: tensor<8xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{param must be a matrix [R, S]}}
  %0:2 = gpt.muon_update %p, %p, %p, %lr : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>
  return
}

// -----

func.func @reduce_scatter_divide(%g: tensor<10x4xf32>) {
  // expected-error @+1 {{dim 0 of tensor<10x4xf32> does not divide by group_size 4}}
  %0 = gpt.reduce_scatter sum %g over "dp", size 4, dim 0 : tensor<10x4xf32>
  return
}

// -----

func.func @all_gather_dim(%g: tensor<10x4xf32>) {
  // expected-error @+1 {{dim 2 is out of range for tensor<10x4xf32>}}
  %0 = gpt.all_gather %g over "dp", size 4, dim 2 : tensor<10x4xf32>
  return
}

// -----

func.func @all_reduce_group(%g: tensor<10x4xf32>) {
  // expected-error @+1 {{group must name a group of ranks}}
  %0 = gpt.all_reduce sum %g over "" : tensor<10x4xf32>
  return
}

// -----

func.func @inferred_type_mismatch(%x: tensor<4x8xf32>) {
  // A generic op whose written result type contradicts the shape rule.
  // expected-error @+2 {{'gpt.relu_square' op failed to infer returned types}}
  // expected-error @+1 {{'gpt.relu_square' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<4x9xf32>'}}
  %0 = "gpt.relu_square"(%x) : (tensor<4x8xf32>) -> tensor<4x9xf32>
  return
}

// -----

func.func @gradients_seed_type(%loss: tensor<f32>, %seed: tensor<f64>, %w: tensor<4x4xf32>) {
  // expected-error @+1 {{seed must have the loss's element type, got 'tensor<f64>' for a loss of 'tensor<f32>'}}
  %g = gpt.gradients %loss, %seed wrt [%w] : tensor<f32>, tensor<f64>, [tensor<4x4xf32>]
  return
}

// -----

func.func @fusion_block_args(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'gpt.fusion' op the body has 2 block arguments for 1 inputs}}
  %f = gpt.fusion(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    gpt.yield %a : tensor<4x8xf32>
  }
  return %f : tensor<4x8xf32>
}

// -----

func.func @fusion_block_arg_type(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'gpt.fusion' op block argument #0 has type 'tensor<4x9xf32>' but input #0 has type 'tensor<4x8xf32>'}}
  %f = gpt.fusion(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x9xf32>):
    gpt.yield %x : tensor<4x8xf32>
  }
  return %f : tensor<4x8xf32>
}

// -----

func.func @fusion_yield_count(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'gpt.fusion' op gpt.yield returns 2 values for 1 results}}
  %f = gpt.fusion(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    gpt.yield %a, %a : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %f : tensor<4x8xf32>
}

// -----

func.func @fusion_yield_type(%x: tensor<4x8xf32>) -> tensor<4x8xf64> {
  // expected-error @+1 {{'gpt.fusion' op result #0 has type 'tensor<4x8xf64>' but gpt.yield returns 'tensor<4x8xf32>'}}
  %f = gpt.fusion(%x) : (tensor<4x8xf32>) -> tensor<4x8xf64> {
  ^bb0(%a: tensor<4x8xf32>):
    gpt.yield %a : tensor<4x8xf32>
  }
  return %f : tensor<4x8xf64>
}

// -----

func.func @fusion_isolated(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %f = gpt.fusion() : () -> tensor<4x8xf32> {
    // expected-error @+1 {{using value defined outside the region}}
    %r = gpt.relu_square %x : tensor<4x8xf32>
    gpt.yield %r : tensor<4x8xf32>
  }
  return %f : tensor<4x8xf32>
}

// -----

func.func @yield_outside_fusion(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'gpt.yield' op expects parent op 'gpt.fusion'}}
  gpt.yield %x : tensor<4x8xf32>
}
