// micro_step: the forward, one gpt.gradients of loss/grad_accum_steps with respect to every
// parameter, added into the gradient buffers; autodiff then replaces the placeholder.
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --grad_accum_steps=4 --function=micro_step | FileCheck %s
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --grad_accum_steps=4 --function=micro_step --emit=autodiff | FileCheck %s --check-prefix=AD

// CHECK-LABEL: func.func @micro_step(
// CHECK-SAME: %[[WTE:[a-z0-9]+]]: tensor<512x128xf32> {gpt.name = "transformer.wte.weight"}
// CHECK-SAME: %[[GWTE:[a-z0-9]+]]: tensor<512x128xf32> {gpt.name = "grad/transformer.wte.weight"}
// CHECK-SAME: -> (tensor<f32> {gpt.name = "loss"}, tensor<512x128xf32> {gpt.name = "grad/transformer.wte.weight"}
// CHECK: %[[LOSS:.*]] = gpt.cross_entropy
// CHECK-NEXT: %[[SEED:.*]] = arith.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT: %[[G:.*]]:8 = gpt.gradients %[[LOSS]], %[[SEED]] wrt [%[[WTE]],
// CHECK-NEXT: %[[ACC:.*]] = gpt.add %[[GWTE]], %[[G]]#0
// CHECK: return %[[LOSS]], %[[ACC]],

// AD-LABEL: func.func @micro_step(
// AD-NOT: gpt.gradients
// AD: %[[LOSS:.*]] = gpt.cross_entropy %[[FLAT:.*]], %[[FT:.*]] :
// AD-NEXT: %[[DL:.*]] = gpt.cross_entropy_grad %[[FLAT]], %[[FT]], %cst
// AD-NEXT: %[[DL3:.*]] = gpt.reshape %[[DL]] to [2, 64, 512]
// AD-NEXT: gpt.softcap_grad
// AD: gpt.attention_grad
// AD: gpt.rotary_grad
// AD: gpt.rotary_grad
// AD: %[[DEMB:.*]] = gpt.embedding_grad %{{.*}}, %{{.*}}, vocab 512
// AD-NEXT: gpt.add %{{.*}}, %[[DEMB]] : tensor<512x128xf32>
// AD-NOT: gpt.gradients

// --stats: build and pass times and each function's op counts, on stderr.
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=autodiff --stats 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// STATS: gptc: stage 'autodiff': built in {{[0-9.]+}} ms, passes {{[0-9.]+}} ms
// STATS: @micro_step: {{[0-9]+}} ops: {{.*}}gpt.matmul 14{{.*}}gpt.matmul_weight_grad 7
// STATS: @optimizer_step:
