// gpt-lower-to-gpu{attention=cudnn} (gptc --attention=cudnn): gpt.attention and
// gpt.attention_grad become the cuda driver's builtins sdpa_fwd.cudnn / sdpa_bwd.cudnn with the
// arguments runtime/device/SDPA_BUILTIN.md fixes: B, T, H, Hkv, D, dtype (a mask of bf16 buffers),
// causal (i64); scale (f64); q, k, v -> out, lse and q, k, v, out, dout, lse -> dq, dk, dv.
// The backward reads the lse its forward kept (the same arena bytes). With GQA (H 2, Hkv 1)
// the forward is cuDNN's and the backward the generated kernels' (reading cuDNN's lse).
// Packed rows keep the generated kernels, and gptc says so; cudnn on a target whose driver
// has no cuDNN is a usage error (exit 2) naming the flag.
// RUN: gptc --depth=1 --n_embd=128 --n_head=2 --vocab=512 --batch=2 --seq=64 --target=cuda \
// RUN:   --attention=cudnn --emit=launches 2>/dev/null | FileCheck %s
// RUN: gptc --depth=1 --n_embd=128 --n_head=2 --n_kv_head=1 --vocab=512 --batch=2 --seq=64 --target=cuda \
// RUN:   --attention=cudnn --emit=launches 2>/dev/null | FileCheck %s --check-prefix=GQA
// RUN: GPT_SFT_CUDA_ATTENTION=cudnn gptc --depth=1 --n_embd=128 --n_head=2 --vocab=512 --batch=2 --seq=64 \
// RUN:   --target=cuda --dtype=bfloat16 --emit=launches 2>/dev/null | FileCheck %s --check-prefix=ENV
// RUN: gptc --depth=1 --n_embd=128 --n_head=2 --vocab=512 --batch=2 --seq=64 --target=cuda --emit=launches \
// RUN:   2>/dev/null | FileCheck %s --check-prefix=GENERATED
// RUN: gptc --depth=1 --n_embd=128 --n_head=2 --vocab=512 --batch=2 --seq=64 --target=cuda --packed \
// RUN:   --attention=cudnn --emit=launches 2>&1 | FileCheck %s --check-prefix=PACKED
// RUN: gptc --depth=1 --n_embd=128 --n_head=2 --vocab=512 --batch=2 --seq=64 --target=cuda --dtype=bfloat16 \
// RUN:   --attention=cudnn --emit=launches 2>&1 >/dev/null | FileCheck %s --check-prefix=BF16NOTE --allow-empty
// RUN: not gptc --depth=1 --target=opencl --attention=cudnn --emit=launches 2>&1 | FileCheck %s --check-prefix=OPENCL
// RUN: gptc --depth=1 --target=opencl --attention=cudnn --emit=launches >/dev/null 2>&1 || test $? -eq 2
// RUN: not gptc --depth=1 --target=cpu --attention=cudnn --emit=launches 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: gptc --depth=1 --target=cpu --attention=cudnn --emit=launches >/dev/null 2>&1 || test $? -eq 2
// RUN: not gptc --depth=1 --target=cuda --attention=flash --emit=launches 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: GPT_SFT_CUDA_ATTENTION=fast not gptc --depth=1 --target=cuda --emit=launches 2>&1 | FileCheck %s --check-prefix=BADENV
// RUN: not gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu="attention=fast" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD

// CHECK: attention: cuDNN SDPA
// CHECK-LABEL: func @logits
// CHECK-NOT: kernel attention
// CHECK: builtin sdpa_fwd.cudnn (i64 2, i64 64, i64 2, i64 2, i64 64, i64 0, i64 1, f64 0.125, [[Q:arena\+[0-9]+:65536]], [[K:arena\+[0-9]+:65536]], [[V:arena\+[0-9]+:65536]], arena+{{[0-9]+}}:65536, arena+{{[0-9]+}}:1024) <- gpt.attention
// CHECK-LABEL: func @micro_step
// CHECK-NOT: kernel attention
// CHECK: builtin sdpa_fwd.cudnn (i64 2, i64 64, i64 2, i64 2, i64 64, i64 0, i64 1, f64 0.125, [[Q2:arena\+[0-9]+:65536]], [[K2:arena\+[0-9]+:65536]], [[V2:arena\+[0-9]+:65536]], [[O2:arena\+[0-9]+:65536]], [[LSE:arena\+[0-9]+:1024]]) <- gpt.attention
// CHECK-NOT: kernel attention
// CHECK: builtin sdpa_bwd.cudnn (i64 2, i64 64, i64 2, i64 2, i64 64, i64 0, i64 1, f64 0.125, [[Q2]], [[K2]], [[V2]], [[O2]], arena+{{[0-9]+}}:65536, [[LSE]], arena+{{[0-9]+}}:65536, arena+{{[0-9]+}}:65536, arena+{{[0-9]+}}:65536) <- gpt.attention_grad
// CHECK-NOT: kernel attention

// GQA-LABEL: func @micro_step
// GQA: builtin sdpa_fwd.cudnn (i64 2, i64 64, i64 2, i64 1, i64 64, i64 0, i64 1, f64 0.125, {{.*}}, [[LSE:arena\+[0-9]+:1024]]) <- gpt.attention
// GQA-NOT: sdpa_bwd
// GQA: kernel attention_grad_kv {{.*}}[[LSE]]{{.*}} <- gpt.attention_grad
// GQA-NOT: sdpa_bwd

// Under bf16 storage q, k, v (and dout) are bf16 buffers, out and the gradients f32: the forward's
// mask is 0b0111 (7), the backward's 0b10111 (23); the driver stages only the f32 ones.
// ENV: builtin sdpa_fwd.cudnn (i64 2, i64 64, i64 2, i64 2, i64 64, i64 7, i64 1, f64 0.125,
// ENV: builtin sdpa_bwd.cudnn (i64 2, i64 64, i64 2, i64 2, i64 64, i64 23, i64 1, f64 0.125,

// GENERATED-NOT: sdpa_
// GENERATED: kernel attention grid
// GENERATED-NOT: sdpa_

// An f32 step is told that its attention inputs are rounded to bf16; a bf16 step is not.
// PACKED: gptc: --attention=cudnn: cuDNN computes attention on bf16 values; this f32 step's attention inputs are rounded to bf16
// BF16NOTE-NOT: rounded to bf16
// PACKED: gptc: --attention=cudnn: packed rows (segment ids) keep the generated attention kernels
// PACKED-NOT: sdpa_
// PACKED: kernel attention_segments
// PACKED-NOT: sdpa_

// OPENCL: gptc: --attention=cudnn: cuDNN's SDPA runs on --target=cuda only; the opencl target's attention is the generated kernels (--attention=generated)
// CPU: gptc: --attention=cudnn: cuDNN's SDPA runs on --target=cuda only; the cpu target's attention is the generated kernels (--attention=generated)
// FLAG: gptc: --attention=flash: the attention is generated or cudnn
// BADENV: GPT_SFT_CUDA_ATTENTION='fast': the cuda target's attention is generated or cudnn
// BAD: gpt-lower-to-gpu: attention must be generated or cudnn, got 'fast'
module {}
