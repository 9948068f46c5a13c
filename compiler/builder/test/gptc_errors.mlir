// gptc's errors name the flag at fault.
// RUN: not gptc --emit=bogus 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not gptc --emit=ptx 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not gptc --dtype=f16 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not gptc --depth=2 --batch=0 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --function=step 2>&1 | FileCheck %s --check-prefix=FUNC

// EMIT: gptc: --emit: unknown stage 'bogus'; expected one of:
// STAGE: gptc: --emit=ptx is a stage of --target=cuda
// DTYPE: gptc: --dtype: unknown dtype 'f16'; expected one of: float32 (f32), float64 (f64), bfloat16 (bf16)
// BATCH: gptc: batch_size must be positive, got 0 (check --batch, --seq, --grad_accum_steps, --dp_world_size)
// FUNC: gptc: --function: no entry point named 'step'
