// Each forward op's VJP rule builds the expected gradient ops. --gpt-test-vjp uses the op's
// own results as cotangents and tags each operand cotangent with gpt.vjp_of = "<op>#<operand>".
// RUN: gpt-opt %s --gpt-test-vjp | FileCheck %s

// CHECK-LABEL: func.func @vjp
func.func @vjp(%wte: tensor<64x16xf32>, %ids: tensor<2x8xi32>, %w: tensor<32x16xf32>,
               %q: tensor<2x8x4x8xf32>, %k: tensor<2x8x2x8xf32>, %pos: tensor<2x8xi32>,
               %logits: tensor<16x64xf32>, %targets: tensor<16xi32>, %a: tensor<2x8x32xf32>) {
  // CHECK: %[[X:.*]] = gpt.embedding
  // CHECK-NEXT: gpt.embedding_grad %{{.*}}, %[[X]], vocab 64 {gpt.vjp_of = "gpt.embedding#0"} : tensor<2x8xi32>, tensor<2x8x16xf32>
  %x = gpt.embedding %wte[%ids] : tensor<64x16xf32>, tensor<2x8xi32>

  // CHECK: %[[H:.*]] = gpt.matmul %[[X]], %[[W:.*]] : tensor<2x8x16xf32>, tensor<32x16xf32>
  // CHECK-NEXT: %[[WT:.*]] = gpt.transpose %[[W]] [1, 0] : tensor<32x16xf32>
  // CHECK-NEXT: gpt.matmul %[[H]], %[[WT]] {gpt.vjp_of = "gpt.matmul#0"} : tensor<2x8x32xf32>, tensor<16x32xf32>
  // CHECK-NEXT: gpt.matmul_weight_grad %[[H]], %[[X]] {gpt.vjp_of = "gpt.matmul#1"} : tensor<2x8x32xf32>, tensor<2x8x16xf32>
  %h = gpt.matmul %x, %w : tensor<2x8x16xf32>, tensor<32x16xf32>

  // CHECK: %[[N:.*]] = gpt.rms_norm %[[X]] {eps = 1.000000e-03 : f64}
  // CHECK-NEXT: gpt.rms_norm_grad %[[X]], %[[N]] {eps = 1.000000e-03 : f64, gpt.vjp_of = "gpt.rms_norm#0"}
  %n = gpt.rms_norm %x {eps = 1.0e-3 : f64} : tensor<2x8x16xf32>

  // CHECK: %[[R:.*]] = gpt.rotary %[[K:.*]], positions %[[P:.*]] : tensor<2x8x2x8xf32>, tensor<2x8xi32>
  // CHECK-NEXT: gpt.rotary_grad %[[R]], positions %[[P]] {gpt.vjp_of = "gpt.rotary#0"}
  %r = gpt.rotary %k, positions %pos : tensor<2x8x2x8xf32>, tensor<2x8xi32>

  // The bf16 rotary's gradient rounds like it, from the cotangent rounded to bf16.
  // CHECK: %[[RR:.*]] = gpt.rotary %[[K]] {round_bf16} : tensor<2x8x2x8xf32>
  // CHECK-NEXT: %[[DRR:.*]] = gpt.round_bf16 %[[RR]]
  // CHECK-NEXT: gpt.rotary_grad %[[DRR]] {gpt.vjp_of = "gpt.rotary#0", round_bf16}
  %rr = gpt.rotary %k {round_bf16} : tensor<2x8x2x8xf32>

  // CHECK: %[[O:.*]] = gpt.attention %[[Q:.*]], %[[K]], %[[R]], segments %[[P]] {causal = false}
  // CHECK-NEXT: gpt.attention_grad %[[Q]], %[[K]], %[[R]], %[[O]], %[[O]], segments %[[P]] {causal = false, gpt.vjp_of = "gpt.attention#2"} : tensor<2x8x4x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>, tensor<2x8xi32>
  %o = gpt.attention %q, %k, %r, segments %pos {causal = false} : tensor<2x8x4x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8xi32>

  // CHECK: %[[RS:.*]] = gpt.relu_square %[[A:.*]] :
  // CHECK-NEXT: gpt.relu_square_grad %[[A]], %[[RS]] {gpt.vjp_of = "gpt.relu_square#0"}
  %rs = gpt.relu_square %a : tensor<2x8x32xf32>

  // The softcap rule reads the output, not the input.
  // CHECK: %[[SC:.*]] = gpt.softcap %[[A]] :
  // CHECK-NEXT: gpt.softcap_grad %[[SC]], %[[SC]] {gpt.vjp_of = "gpt.softcap#0"}
  %sc = gpt.softcap %a : tensor<2x8x32xf32>

  // The bf16 softcap's rule rounds the cotangent first.
  // CHECK: %[[SB:.*]] = gpt.softcap %[[A]] {round_bf16} :
  // CHECK-NEXT: %[[DSB:.*]] = gpt.round_bf16 %[[SB]]
  // CHECK-NEXT: gpt.softcap_grad %[[SB]], %[[DSB]] {gpt.vjp_of = "gpt.softcap#0"}
  %sb = gpt.softcap %a {round_bf16} : tensor<2x8x32xf32>

  // round_bf16 passes dy through, rounded to bf16 like the forward.
  // CHECK: %[[RB:.*]] = gpt.round_bf16 %[[A]] :
  // CHECK-NEXT: gpt.round_bf16 %[[RB]] {gpt.vjp_of = "gpt.round_bf16#0"} : tensor<2x8x32xf32>
  %rb = gpt.round_bf16 %a : tensor<2x8x32xf32>

  // add passes dy through: no new op.
  // CHECK: %[[S:.*]] = gpt.add
  // CHECK-NEXT: %[[M:.*]] = gpt.mul %[[A]], %[[RS]]
  // CHECK-NEXT: gpt.mul %[[M]], %[[RS]] {gpt.vjp_of = "gpt.mul#0"}
  // CHECK-NEXT: gpt.mul %[[M]], %[[A]] {gpt.vjp_of = "gpt.mul#1"}
  %s = gpt.add %a, %rs : tensor<2x8x32xf32>, tensor<2x8x32xf32>
  %m = gpt.mul %a, %rs : tensor<2x8x32xf32>, tensor<2x8x32xf32>

  // CHECK: %[[RE:.*]] = gpt.reshape %[[A]] to [16, 32]
  // CHECK-NEXT: gpt.reshape %[[RE]] to [2, 8, 32] {gpt.vjp_of = "gpt.reshape#0"} : tensor<16x32xf32>
  %re = gpt.reshape %a to [16, 32] : tensor<2x8x32xf32>

  // The inverse of [1, 2, 0] is [2, 0, 1].
  // CHECK: %[[T:.*]] = gpt.transpose %[[A]] [1, 2, 0]
  // CHECK-NEXT: gpt.transpose %[[T]] [2, 0, 1] {gpt.vjp_of = "gpt.transpose#0"} : tensor<8x32x2xf32>
  %t = gpt.transpose %a [1, 2, 0] : tensor<2x8x32xf32>

  // CHECK: %[[L:.*]] = gpt.cross_entropy %[[LG:.*]], %[[TG:.*]] {ignore_index = -100 : i64}
  // CHECK-NEXT: gpt.cross_entropy_grad %[[LG]], %[[TG]], %[[L]] {gpt.vjp_of = "gpt.cross_entropy#0", ignore_index = -100 : i64}
  %l = gpt.cross_entropy %logits, %targets {ignore_index = -100 : i64} : tensor<16x64xf32>, tensor<16xi32>
  return
}

// Without their optional operands, rotary and attention return one cotangent per operand
// present (the pass fails on a count that differs from the op's operands).
// CHECK-LABEL: func.func @vjp_without_optional_operands
func.func @vjp_without_optional_operands(%q: tensor<2x8x4x8xf32>, %k: tensor<2x8x2x8xf32>) {
  // CHECK: %[[R:.*]] = gpt.rotary %[[K:.*]] : tensor<2x8x2x8xf32>
  // CHECK-NEXT: gpt.rotary_grad %[[R]] {gpt.vjp_of = "gpt.rotary#0"} : tensor<2x8x2x8xf32>
  %r = gpt.rotary %k : tensor<2x8x2x8xf32>
  // CHECK: %[[O:.*]] = gpt.attention %[[Q:.*]], %[[K]], %[[R]] :
  // CHECK-NEXT: gpt.attention_grad %[[Q]], %[[K]], %[[R]], %[[O]], %[[O]] {gpt.vjp_of = "gpt.attention#2"} :
  %o = gpt.attention %q, %k, %r : tensor<2x8x4x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x2x8xf32>
  return
}
