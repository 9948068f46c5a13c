#!/usr/bin/env bash
# End to end over //trainer on a tiny config: the embedded demo (reduced step count) sets
# itself up under a fresh base dir, trains, logs nanochat's lines and the validation
# instrumentation, writes metrics.jsonl and a checkpoint; a second run fine-tunes the base
# checkpoint with explicit flags (--model_source=base); every bad flag or file is an error
# that names it, before any work.
set -uo pipefail
trainer="$1"; chat="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
base="$tmp/base"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -qE -- "$1" "$2" || fail "no line matching '$1' in $2: $(tail -20 "$2")"; }

# 1. The demo, 6 iterations (5 optimizer steps), evaluations every 3.
NANOCHAT_BASE_DIR="$base" "$trainer" --demo --max_iterations=6 --eval_every=3 --eval_steps=2 \
  --num_threads=2 > "$tmp/demo.log" 2>&1 || fail "demo failed: $(tail -20 "$tmp/demo.log")"
log="$tmp/demo.log"
expect '^\[demo\] the embedded demo \(the flags given override its options\)\. It fine-tunes' "$log"
expect '^\[demo\] training a 4096-token BPE tokenizer' "$log"
expect '^\[demo\] writing a randomly initialised base model \(depth 2' "$log"
expect '^\[VALIDATION\] ✓ Model is compiled \(static batch \[4, 512\]; device cpu[^;]*; artifact [0-9a-f]{16}[^,]*, compiled in [0-9.]+ s; arena [0-9.]+ MiB' "$log"
expect '^=> Setting grad accum steps: 4$' "$log"
for s in 0 1 2; do expect "^\[VALIDATION\] Step $s batch shape: inputs \[4, 512\], targets \[4, 512\]" "$log"; done
grep -q '^\[VALIDATION\] Step 3 batch shape' "$log" && fail "batch shape logged past step 2"
expect '^Step 00000 \| Validation loss: [0-9]+\.[0-9]{6}$' "$log"
expect '^Step 00003 \| Validation loss: ' "$log"
expect '^Step 00005 \| Validation loss: ' "$log"
expect '^Step 00005 \| synthetic_mc_acc: [0-9]\.[0-9]{6}, simple_spelling_acc: [0-9]\.[0-9]{6}, spelling_bee_acc: [0-9]\.[0-9]{6}$' "$log"
expect '^Step 00000/00006 \| Training loss: [0-9]+\.[0-9]{6}\| lrm: 1\.000000\| num_tokens: [0-9,]+$' "$log"
expect '^Step 00004/00006 \| Training loss: ' "$log"
grep -q '^Step 00005/00006 | Training loss' "$log" && fail "the last iteration was trained (nanochat evaluates only)"
expect '^\[VALIDATION\] Summary: compiled \(device cpu\) \| steps 5 \| tokens/sec [0-9]+ .*recompilations 0 \(training\), 0 \(evaluation: the interpreter\) \| peak memory [0-9.]+ GB RSS \| CPU ISA [a-z0-9_]+' "$log"
# The level the kernels ran at; under a cap (BUILD: trainer_e2e_test_<cap>), exactly the cap.
if [[ -n "${GPT_SFT_CPU_ISA:-}" ]]; then
  expect "^\\[VALIDATION\\] Summary: .* \\| CPU ISA ${GPT_SFT_CPU_ISA}( \\(capped by GPT_SFT_CPU_ISA; the CPU has [a-z0-9_]+\\))?\$" "$log"
fi
first=$(grep -oE '^Step 00000/00006 \| Training loss: [0-9.]+' "$log" | awk '{print $NF}')
last=$(grep -oE '^Step 00004/00006 \| Training loss: [0-9.]+' "$log" | awk '{print $NF}')
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }' || fail "training loss did not fall: $first -> $last"

run="$base/chatsft_checkpoints/d2"
step="$run/step_000005"  # one directory per saved step (runtime/checkpoint/FORMAT.md)
[[ -f "$step/model_000005.safetensors" && -f "$step/meta_000005.json" ]] || fail "no checkpoint in $step: $(ls -R "$run")"
grep -q '"step": 5' "$step/meta_000005.json" || fail "meta has no step 5"
grep -q '"val_loss": [0-9]' "$step/meta_000005.json" || fail "meta has no val_loss"
grep -q '"synthetic_mc_acc": [0-9]' "$step/meta_000005.json" || fail "meta has no synthetic_mc_acc"
[[ $(wc -l < "$run/metrics.jsonl") -eq 5 ]] || fail "metrics.jsonl should have 5 records: $(cat "$run/metrics.jsonl")"
for key in run step loss lr_multiplier supervised_tokens padding_fraction step_seconds tokens_per_second \
           supervised_tokens_per_second peak_rss_bytes; do
  [[ $(grep -c "\"$key\":" "$run/metrics.jsonl") -eq 5 ]] || fail "metrics.jsonl lacks $key in a record"
done
ls "$run" | grep -q tmp && fail "a temp file was left in $run"
# The fine-tuned checkpoint loads (checked load: names, shapes, checksum) and answers, through
# the command the run printed, from a shell whose base dir is elsewhere (the run directory
# holds its tokenizer).
expect "^\[demo\] done: .*; talk to it: \./bazelw run //trainer:chat -- --checkpoint_dir=$run\$" "$log"
printed=$(sed -n 's/.*talk to it: \.\/bazelw run \/\/trainer:chat -- //p' "$log")
chat_abs=$(realpath "$chat")
(cd / && NANOCHAT_BASE_DIR="$tmp/elsewhere" "$chat_abs" $printed --prompt="Spell the word cat" --max_tokens=8 \
  --num_threads=2 > "$tmp/chat.log" 2>&1) || fail "the printed chat command fails from a fresh shell: $(tail -5 "$tmp/chat.log")"

# 2. Fine-tune the base checkpoint with explicit flags (no demo): padded and packed rows,
# compiled and eager; both paths start from the same weights and batch, so their first
# training losses agree (the compiled step matches the interpreter), and a second compiled
# run of a config loads its step from the compile cache.
runs=0  # each run in a directory of its own: a directory belongs to one run
for packing in pad bestfit; do
  for compile in true false true; do
    runs=$((runs + 1))
    "$trainer" --base_dir="$base" --model_source=base --max_iterations=2 --max_seq_len=256 \
      --target_examples_per_step=8 --eval_steps=1 --eval_metrics_max_problems=4 --packing=$packing --num_threads=2 \
      --compile=$compile --output_dir="$tmp/finetune_$runs" \
      > "$tmp/resume.log" 2>&1 || fail "resume ($packing, compile=$compile) failed: $(tail -20 "$tmp/resume.log")"
    expect '^Loading the base model from .*/base_checkpoints/d2/model_000000\.safetensors$' "$tmp/resume.log"
    grep -q '^\[demo\]' "$tmp/resume.log" && fail "explicit flags ran the demo"
    loss=$(grep -oE '^Step 00000/00002 \| Training loss: [0-9.]+' "$tmp/resume.log" | awk '{print $NF}')
    [[ -n "$loss" ]] || fail "no first training loss ($packing, compile=$compile)"
    if [[ $compile == false ]]; then eager=$loss; else compiled=$loss; fi
    cp "$tmp/resume.log" "$tmp/resume_${packing}_$compile.log"
  done
  expect 'Model is compiled .*loaded from the compile cache in [0-9.]+ s' "$tmp/resume_${packing}_true.log"
  expect '^\[VALIDATION\] ✗ Model is NOT compiled' "$tmp/resume_${packing}_false.log"
  awk -v a="$eager" -v b="$compiled" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5 * a) }' \
    || fail "compiled and eager first losses differ ($packing): $compiled vs $eager"
done

# 2b. --dtype=bfloat16 (nanochat's autocast rounding): compiled and eager first losses agree as
# tightly as float32's (both paths round the same values); after a step (the base model's zero
# lm_head makes every first loss ln V) the validation loss differs from float32's.
for compile in true false; do
  "$trainer" --base_dir="$base" --model_source=base --max_iterations=2 --max_seq_len=256 \
    --target_examples_per_step=8 --eval_steps=1 --eval_metrics_max_problems=4 --packing=bestfit --num_threads=2 \
    --compile=$compile --dtype=bfloat16 --output_dir="$tmp/bf16_$compile" > "$tmp/bf16.log" 2>&1 \
    || fail "bfloat16 run (compile=$compile) failed: $(tail -20 "$tmp/bf16.log")"
  loss=$(grep -oE '^Step 00000/00002 \| Training loss: [0-9.]+' "$tmp/bf16.log" | awk '{print $NF}')
  [[ -n "$loss" ]] || fail "no first bfloat16 training loss (compile=$compile)"
  if [[ $compile == false ]]; then bf16_eager=$loss; else bf16_compiled=$loss; fi
  cp "$tmp/bf16.log" "$tmp/bf16_$compile.log"
done
awk -v a="$bf16_eager" -v b="$bf16_compiled" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5 * a) }' \
  || fail "compiled and eager bfloat16 first losses differ: $bf16_compiled vs $bf16_eager"
val() { grep -oE '^Step 00001 \| Validation loss: [0-9.]+' "$1" | awk '{print $NF}'; }
bf16_val=$(val "$tmp/bf16_true.log"); f32_val=$(val "$tmp/resume_bestfit_true.log")
[[ -n "$bf16_val" && -n "$f32_val" ]] || fail "no step-1 validation loss: bfloat16 '$bf16_val', float32 '$f32_val'"
[[ "$bf16_val" != "$f32_val" ]] || fail "the bfloat16 validation loss equals float32's ($f32_val): no rounding"
echo "bfloat16: first loss $bf16_compiled compiled, $bf16_eager eager; validation loss after a step $bf16_val (float32 $f32_val)"

# 3. Bad flags and files: exit 2 (flags) or 1 (files), the culprit named, nothing written.
bad() {  # expected-text, then the trainer's arguments (a tiny run first, so a case that is
  # wrongly accepted fails fast instead of training at the defaults; later flags win)
  local want="$1"; shift
  if "$trainer" --max_iterations=2 --max_seq_len=256 --target_examples_per_step=4 --eval_steps=1 "$@" \
      > "$tmp/bad.log" 2>&1; then fail "accepted: $*"; fi
  grep -qF -- "$want" "$tmp/bad.log" || fail "error for '$*' does not say '$want': $(cat "$tmp/bad.log")"
}
bad "--packing=zigzag is not one of: pad" --base_dir="$base" --packing=zigzag
bad "--target_examples_per_step=30 is not a multiple of --device_batch_size=4" --base_dir="$base" --target_examples_per_step=30
bad "--model_source=sft is not one of: base, mid" --base_dir="$base" --model_source=sft
bad "--dtype=float16 is not supported" --base_dir="$base" --dtype=float16
bad "--max_iterations=-5 must be -1" --base_dir="$base" --max_iterations=-5
bad "--max_iterations=1 takes no optimizer step: the last iteration only evaluates" --base_dir="$base" --max_iterations=1
bad "--max_iterations=0 takes no optimizer step" --base_dir="$base" --max_iterations=0
# Checked once the data is read, still before any file: nothing in the output dir.
bad "--max_seq_len=3 holds no supervised target: every conversation of the first 1 training step(s)" \
  --base_dir="$base" --max_seq_len=3 --output_dir="$tmp/too_short"
[[ ! -e "$tmp/too_short" ]] || fail "the refused --max_seq_len=3 created its output dir: $(ls -A "$tmp/too_short")"
for i in 1 2 3 4; do echo '[{"role":"user","content":"hi"},{"role":"assistant","content":"hello there"}]'; done > "$tmp/one_step.jsonl"
cp "$tmp/one_step.jsonl" "$tmp/one_step_val.jsonl"
bad "the run would take no optimizer step: the training data has 4 rows for --target_examples_per_step=4 per step, 1 iteration" \
  --base_dir="$base" --jsonl="$tmp/one_step.jsonl" --val_jsonl="$tmp/one_step_val.jsonl" --builtin_tasks=false \
  --max_iterations=-1 --output_dir="$tmp/one_row"
[[ ! -e "$tmp/one_row" ]] || fail "the refused one-step run created its output dir"
bad "--device_batch_size=0 must be positive" --base_dir="$base" --device_batch_size=0
bad "--nproc_per_node=0 must be at least 1" --base_dir="$base" --nproc_per_node=0
bad "Unknown command line flag 'learning_rate'" --base_dir="$base" --learning_rate=0.1
bad "no usable tokenizer" --base_dir="$tmp/empty"
bad "mid_checkpoints" --base_dir="$base" --model_source=mid
bad "d7" --base_dir="$base" --model_tag=d7
mkdir -p "$tmp/corrupt/tokenizer" "$tmp/corrupt/base_checkpoints/d2"
cp "$base/tokenizer/tokenizer.txt" "$tmp/corrupt/tokenizer/"
cp "$base/base_checkpoints/d2/meta_000000.json" "$tmp/corrupt/base_checkpoints/d2/"
head -c 100000 "$base/base_checkpoints/d2/model_000000.safetensors" > "$tmp/corrupt/base_checkpoints/d2/model_000000.safetensors"
bad "model_000000.safetensors" --base_dir="$tmp/corrupt"
[[ ! -e "$tmp/corrupt/chatsft_checkpoints" ]] || fail "a failed load still created the run directory"
# The demo's setup under a base dir that cannot be made (under a file; under /proc, which no
# user may write): a message naming the directory and exit 1, not an uncaught exception (134).
touch "$tmp/a_file"
for unwritable in "$tmp/a_file/base" /proc/gpt_sft_forbidden; do
  NANOCHAT_BASE_DIR="$unwritable" "$trainer" --demo > "$tmp/unwritable.log" 2>&1
  rc=$?
  [[ $rc == 1 ]] || fail "--demo with base dir $unwritable: rc $rc, not 1: $(tail -5 "$tmp/unwritable.log")"
  expect "^trainer: error: cannot create $unwritable/tokenizer for the tokenizer: .*choose another --base_dir" "$tmp/unwritable.log"
done
echo "PASS"
