// gptc --emit=cost: the cuda artifact's launches priced on a GPU (compiler/cost), one row per
// launch, totals per entry point, then the training step; --emit=cost_json the same as JSON.
// An unknown --gpu exits 2 naming the known ones, before anything is compiled.
// RUN: gptc --target=cuda --dtype=bfloat16 --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=cost --gpu=h100 | FileCheck %s
// RUN: gptc --target=cuda --dtype=bfloat16 --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=cost_json --gpu=a100 | FileCheck %s --check-prefix=JSON
// RUN: (gptc --target=cuda --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=cost --gpu=v100 2>&1; echo "exit $?") | FileCheck %s --check-prefix=UNKNOWN
// RUN: not gptc --target=opencl --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=cost 2>&1 | FileCheck %s --check-prefix=TARGET

// CHECK: gptc cost model for NVIDIA H100 SXM5 80GB (predictions, not measurements)
// CHECK: peaks: bf16 tensor 989.0 TFLOP/s, tf32 tensor 494.5, fp32 67.0; HBM 3.35 TB/s
// CHECK: efficiencies: vendor library 0.70, generated tensor-core 0.50, generated fp32 0.50, bandwidth 0.80
// CHECK: step: batch [2, 64], padded, grad_accum_steps 1, dp_world_size 1, dtype bf16
// CHECK-LABEL: func @logits:
// CHECK: #  kind       name{{.*}}unit{{.*}}bf16 GF   tf32 GF   fp32 GF{{.*}}read MB  write MB  local MB    time us  bound
// CHECK: builtin    gemm.bf16{{.*}}bf16-tc{{.*}}gpt.matmul
// Under bf16 autocast attention runs on the warp-tile kernels, priced on bf16 tensor cores.
// CHECK: kernel     flash_attention  {{.*}}bf16-tc{{.*}}gpt.attention
// CHECK: total @logits:
// CHECK-LABEL: func @micro_step:
// CHECK: kernel     flash_attention_grad_kv {{.*}}bf16-tc{{.*}}gpt.attention_grad
// CHECK: total @micro_step:{{.*}}ms; FLOPs bf16-tc {{[0-9.]+}} GF, tf32-tc 0.0 GF, fp32{{.*}}GF; bytes read
// CHECK-LABEL: func @optimizer_step:
// CHECK: kernel     adamw{{.*}}memory{{.*}}gpt.adamw_update
// CHECK: training step on one h100 (micro_step x 1 + optimizer_step):
// CHECK-NEXT: micro_step{{.*}}ms{{.*}}launches
// CHECK-NEXT: optimizer_step{{.*}}ms{{.*}}launches
// CHECK-NEXT: step{{.*}}ms{{.*}}launches for 128 tokens (B 2 x T 64 x grad_accum 1
// CHECK-NEXT: tokens/s
// CHECK-NEXT: model FLOPs{{.*}}nanochat's estimate_flops
// CHECK-NEXT: MFU{{.*}}% of the bf16 tensor peak 989 TFLOP/s
// CHECK: where the time goes

// JSON: "gpu": {
// JSON-NEXT: "name": "a100",
// JSON: "efficiencies": {
// JSON: "functions": [
// JSON: "name": "micro_step",
// JSON: "step": {
// JSON: "mfu":

// UNKNOWN: gptc: --gpu: unknown GPU 'v100'; known: h100, h200, a100
// UNKNOWN: exit 2

// TARGET: gptc: --emit=cost prices a --target=cuda artifact
