// The forward of nanochat's GPT as the builder emits it (one layer, packed rows).
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --packed --function=loss | FileCheck %s
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --function=loss | FileCheck %s --check-prefix=PADDED
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=-1 --function=loss | FileCheck %s --check-prefix=DYNAMIC

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[WTE:[a-z0-9]+]]: tensor<512x128xf32> {gpt.name = "transformer.wte.weight"}
// CHECK-SAME: %[[CQ:[a-z0-9]+]]: tensor<128x128xf32> {gpt.name = "transformer.h.0.attn.c_q.weight"}
// CHECK-SAME: {gpt.name = "lm_head.weight"}
// CHECK-SAME: %[[IDS:[a-z0-9]+]]: tensor<2x64xi32> {gpt.name = "inputs"}
// CHECK-SAME: %[[TGT:[a-z0-9]+]]: tensor<2x64xi32> {gpt.name = "targets"}
// CHECK-SAME: %[[SEG:[a-z0-9]+]]: tensor<2x64xi32> {gpt.name = "segment_ids"}
// CHECK-SAME: %[[POS:[a-z0-9]+]]: tensor<2x64xi32> {gpt.name = "positions"}
// CHECK-SAME: -> (tensor<f32> {gpt.name = "loss"})
// x = norm(wte[ids]), then the block's pre-norm.
// CHECK: %[[EMB:.*]] = gpt.embedding %[[WTE]][%[[IDS]]]
// CHECK-NEXT: %[[X0:.*]] = gpt.rms_norm %[[EMB]]
// CHECK-NEXT: %[[H:.*]] = gpt.rms_norm %[[X0]]
// q: project, split heads, rotary at the packed positions, then the QK norm.
// CHECK-NEXT: %[[Q:.*]] = gpt.matmul %[[H]], %[[CQ]]
// CHECK-NEXT: %[[QH:.*]] = gpt.reshape %[[Q]] to [2, 64, 1, 128]
// CHECK-NEXT: %[[QR:.*]] = gpt.rotary %[[QH]], positions %[[POS]]
// CHECK-NEXT: %[[QN:.*]] = gpt.rms_norm %[[QR]] : tensor<2x64x1x128xf32>
// CHECK: %[[KN:.*]] = gpt.rms_norm %{{.*}} : tensor<2x64x1x128xf32>
// CHECK: %[[V:.*]] = gpt.reshape
// Document-causal attention over the segment ids, then c_proj and the residual.
// CHECK-NEXT: %[[Y:.*]] = gpt.attention %[[QN]], %[[KN]], %[[V]], segments %[[SEG]]
// CHECK-NEXT: %[[YM:.*]] = gpt.reshape %[[Y]] to [2, 64, 128]
// CHECK-NEXT: %[[P:.*]] = gpt.matmul %[[YM]]
// CHECK-NEXT: %[[X1:.*]] = gpt.add %[[X0]], %[[P]]
// The MLP: relu(c_fc(norm(x)))^2, c_proj, residual.
// CHECK-NEXT: %[[H2:.*]] = gpt.rms_norm %[[X1]]
// CHECK-NEXT: %[[FC:.*]] = gpt.matmul %[[H2]], {{.*}} : tensor<2x64x128xf32>, tensor<512x128xf32>
// CHECK-NEXT: %[[ACT:.*]] = gpt.relu_square %[[FC]]
// CHECK-NEXT: %[[MP:.*]] = gpt.matmul %[[ACT]], {{.*}} : tensor<2x64x512xf32>, tensor<128x512xf32>
// CHECK-NEXT: %[[X2:.*]] = gpt.add %[[X1]], %[[MP]]
// Head: norm, lm_head, softcap 15 (the default), cross entropy over flattened rows.
// CHECK-NEXT: %[[HF:.*]] = gpt.rms_norm %[[X2]]
// CHECK-NEXT: %[[LOGITS:.*]] = gpt.matmul %[[HF]]
// CHECK-NEXT: %[[CAP:.*]] = gpt.softcap %[[LOGITS]] : tensor<2x64x512xf32>
// CHECK-NEXT: %[[FLAT:.*]] = gpt.reshape %[[CAP]] to [-1, 512]
// CHECK-NEXT: %[[FT:.*]] = gpt.reshape %[[TGT]] to [-1] : tensor<2x64xi32>
// CHECK-NEXT: %[[LOSS:.*]] = gpt.cross_entropy %[[FLAT]], %[[FT]] : tensor<128x512xf32>, tensor<128xi32>
// CHECK-NEXT: return %[[LOSS]]

// Padded rows: plain causal attention, rotary at 0..T-1.
// PADDED-NOT: segment_ids
// PADDED: gpt.rotary %{{.*}} : tensor<2x64x1x128xf32>
// PADDED: gpt.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x64x1x128xf32>, tensor<2x64x1x128xf32>, tensor<2x64x1x128xf32>{{$}}

// Dynamic T for evaluation at any length.
// DYNAMIC: tensor<2x?xi32> {gpt.name = "inputs"}
// DYNAMIC: gpt.reshape %{{.*}} to [2, -1, 1, 128] : tensor<2x?x128xf32>
// DYNAMIC: gpt.cross_entropy %{{.*}}, %{{.*}} : tensor<?x512xf32>, tensor<?xi32>

// @logits is the same forward without the loss, targets not taken.
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=1 --seq=-1 --function=logits | FileCheck %s --check-prefix=FN
// FN-LABEL: func.func @logits(
// FN-NOT: targets
// FN: -> (tensor<1x?x512xf32> {gpt.name = "logits"})
// FN: %[[CAP:.*]] = gpt.softcap
// FN-NEXT: return %[[CAP]]
