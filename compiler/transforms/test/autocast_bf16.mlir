// gpt-autocast-bf16 rounds where nanochat's bf16 autocast rounds: each activation op's result,
// and a matmul's f32 weight where it is read; the loss and what does not read the tokens
// stay f32. Running it twice changes nothing more.
// RUN: gptc-opt %s --gpt-autocast-bf16 | FileCheck %s
// RUN: gptc-opt %s --gpt-autocast-bf16 --gpt-autocast-bf16 | FileCheck %s
// The step gptc builds for --dtype=bfloat16 is the same forward with the rounding in.
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --dtype=bfloat16 --emit=gpt | FileCheck %s --check-prefix=GPTC

// CHECK: module attributes {gpt.autocast = "bf16"}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[WTE:.*]]: tensor<64x16xf32>, %[[IDS:.*]]: tensor<2x8xi32>, %[[W:.*]]: tensor<32x16xf32>, %[[U:.*]]: tensor<16x32xf32>, %[[T:.*]]: tensor<16xi32>, %[[LR:.*]]: tensor<f32>)
// The master weights, cast to bf16 where the matmuls read them.
// CHECK-DAG: %[[WB:.*]] = gpt.round_bf16 %[[W]] : tensor<32x16xf32>
// CHECK-DAG: %[[UB:.*]] = gpt.round_bf16 %[[U]] : tensor<16x32xf32>
// CHECK: %[[E:.*]] = gpt.embedding %[[WTE]][%[[IDS]]]
// CHECK-NEXT: %[[EB:.*]] = gpt.round_bf16 %[[E]]
// CHECK-NEXT: %[[N:.*]] = gpt.rms_norm %[[EB]]
// CHECK-NEXT: %[[NB:.*]] = gpt.round_bf16 %[[N]]
// CHECK-NEXT: %[[H:.*]] = gpt.matmul %[[NB]], %[[WB]]
// CHECK-NEXT: %[[HB:.*]] = gpt.round_bf16 %[[H]]
// CHECK-NEXT: %[[A:.*]] = gpt.relu_square %[[HB]]
// CHECK-NEXT: %[[AB:.*]] = gpt.round_bf16 %[[A]]
// CHECK-NEXT: %[[P:.*]] = gpt.matmul %[[AB]], %[[UB]]
// CHECK-NEXT: %[[PB:.*]] = gpt.round_bf16 %[[P]]
// The residual add is a bf16 op too.
// CHECK-NEXT: %[[R:.*]] = gpt.add %[[EB]], %[[PB]]
// CHECK-NEXT: %[[RB:.*]] = gpt.round_bf16 %[[R]]
// softcap is nanochat's three bf16 ops (its round_bf16 attribute).
// CHECK-NEXT: %[[S:.*]] = gpt.softcap %[[RB]] {round_bf16}
// The cross-entropy reads the bf16 logits and computes in f32; its loss is not rounded.
// CHECK-NEXT: %[[F:.*]] = gpt.reshape %[[S]] to [16, 16]
// CHECK-NEXT: %[[L:.*]] = gpt.cross_entropy %[[F]], %[[T]]
// CHECK-NEXT: %[[M:.*]] = gpt.mul %[[L]], %[[LR]] : tensor<f32>, tensor<f32>
// CHECK-NEXT: %[[LRM:.*]] = gpt.mul %[[LR]], %[[LR]] : tensor<f32>, tensor<f32>
// CHECK-NEXT: return %[[M]], %[[LRM]]
func.func @forward(%wte: tensor<64x16xf32>, %ids: tensor<2x8xi32>, %w: tensor<32x16xf32>, %u: tensor<16x32xf32>,
                   %targets: tensor<16xi32>, %lr: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %e = gpt.embedding %wte[%ids] : tensor<64x16xf32>, tensor<2x8xi32>
  %n = gpt.rms_norm %e : tensor<2x8x16xf32>
  %h = gpt.matmul %n, %w : tensor<2x8x16xf32>, tensor<32x16xf32>
  %a = gpt.relu_square %h : tensor<2x8x32xf32>
  %p = gpt.matmul %a, %u : tensor<2x8x32xf32>, tensor<16x32xf32>
  %r = gpt.add %e, %p : tensor<2x8x16xf32>, tensor<2x8x16xf32>
  %s = gpt.softcap %r : tensor<2x8x16xf32>
  %f = gpt.reshape %s to [16, 16] : tensor<2x8x16xf32>
  %loss = gpt.cross_entropy %f, %targets : tensor<16x16xf32>, tensor<16xi32>
  %scaled = gpt.mul %loss, %lr : tensor<f32>, tensor<f32>
  %lr2 = gpt.mul %lr, %lr : tensor<f32>, tensor<f32>
  return %scaled, %lr2 : tensor<f32>, tensor<f32>
}

// Attention reads q, k, v as bf16: rotary rounds inside (its round_bf16 attribute: nanochat
// rounds cos, sin, each product and each sum), rms_norm results are rounded, and the reshaped
// matmul result is bf16-valued already, so no input needs a rounding of its own.
// CHECK-LABEL: func.func @attention
// CHECK: %[[ROT:.*]] = gpt.rotary %{{.*}} {round_bf16}
// CHECK-NEXT: %[[QN:.*]] = gpt.rms_norm %[[ROT]]
// CHECK-NEXT: %[[QB:.*]] = gpt.round_bf16 %[[QN]]
// CHECK: %[[O:.*]] = gpt.attention %[[QB]], %[[QB]], %{{.*}} :
// CHECK-NEXT: %[[OB:.*]] = gpt.round_bf16 %[[O]]
// CHECK-NEXT: return %[[OB]]
func.func @attention(%wte: tensor<64x16xf32>, %ids: tensor<2x8xi32>, %w: tensor<16x16xf32>) -> tensor<2x8x2x8xf32> {
  %e = gpt.embedding %wte[%ids] : tensor<64x16xf32>, tensor<2x8xi32>
  %h = gpt.matmul %e, %w : tensor<2x8x16xf32>, tensor<16x16xf32>
  %v = gpt.reshape %h to [2, 8, 2, 8] : tensor<2x8x16xf32>
  %q = gpt.rotary %v : tensor<2x8x2x8xf32>
  %qn = gpt.rms_norm %q : tensor<2x8x2x8xf32>
  %o = gpt.attention %qn, %qn, %v : tensor<2x8x2x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x2x8xf32>
  return %o : tensor<2x8x2x8xf32>
}

// GPTC: module attributes {gpt.autocast = "bf16"
// GPTC-LABEL: func.func @micro_step(
// GPTC: gpt.round_bf16
// GPTC: gpt.cross_entropy
// GPTC-NOT: gpt.round_bf16
// GPTC: gpt.gradients
// GPTC-LABEL: func.func @optimizer_step(
// GPTC-NOT: gpt.round_bf16
// GPTC: return
