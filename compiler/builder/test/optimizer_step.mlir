// optimizer_step: nanochat's SFT groups. lr = initial_lr x lr_multiplier per group:
// AdamW at 0.2 (wte) and 0.004 (lm_head), both x (128/768)^-0.5 x 0.02; Muon at 0.02 x 0.02.
// nanochat's betas (0.8, 0.95), eps 1e-10, weight decay 0, momentum 0.95, Nesterov and 5
// Newton-Schulz steps are the ops' defaults, so they are not printed.
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --function=optimizer_step | FileCheck %s

// CHECK-LABEL: func.func @optimizer_step(
// CHECK-SAME: {gpt.name = "adamw.exp_avg/transformer.wte.weight"}
// CHECK-SAME: {gpt.name = "muon.momentum_buffer/transformer.h.0.attn.c_q.weight"}
// CHECK-SAME: %[[LRM:[a-z0-9]+]]: tensor<f32> {gpt.name = "lr_multiplier"}, %[[STEP:[a-z0-9]+]]: tensor<f32> {gpt.name = "step"}
// 0.2 * 2.449489743 * 0.02
// CHECK: %[[C0:.*]] = arith.constant dense<0.00979795{{[0-9]*}}> : tensor<f32>
// CHECK-NEXT: %[[LR0:.*]] = gpt.mul %[[C0]], %[[LRM]]
// CHECK-NEXT: gpt.adamw_update %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[LR0]], %[[STEP]] :
// CHECK: %[[C1:.*]] = arith.constant dense<4.000000e-04> : tensor<f32>
// CHECK-NEXT: %[[LR1:.*]] = gpt.mul %[[C1]], %[[LRM]]
// CHECK-COUNT-6: gpt.muon_update %{{.*}}, %{{.*}}, %{{.*}}, %[[LR1]] :
// 0.004 * 2.449489743 * 0.02
// CHECK: arith.constant dense<1.95959{{[0-9]*}}E-4> : tensor<f32>
// CHECK: gpt.adamw_update %arg7
// CHECK: return
