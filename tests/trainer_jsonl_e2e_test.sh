#!/usr/bin/env bash
# End to end over //trainer on the user's own conversations: a tiny random base model
# (//trainer:setup_base_model, depth 1, under a second) fine-tuned on data/testdata/chats.jsonl
# (system messages, assistant text/python/python_output parts, one conversation longer than
# a row) with --builtin_tasks=false, validated on data/testdata/chats_val.jsonl. It trains
# (the loss falls), it evaluates on the held-out file (not the built-in tasks), and every
# step's supervised tokens are those of //data:dump_batch's batches for the same flags. The
# tokenizer, B = 2 and T = 96 are those of data/testdata/nanochat_batches.json, so those
# batches are the ones data/pipeline/nanochat_batches_test finds equal to nanochat's render +
# collate. Bad data flags and files: an error naming the flag, file and line, before
# anything is written.
set -uo pipefail
trainer="$1"; setup="$2"; dump_batch="$3"; chats="$4"; val="$5"; tokenizer="$6"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
base="$tmp/base"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -qE -- "$1" "$2" || fail "no line matching '$1' in $2: $(tail -20 "$2")"; }

mkdir -p "$base/tokenizer" && cp "$tokenizer" "$base/tokenizer/tokenizer.txt"  # the golden's tokenizer, kept by setup
"$setup" --base_dir="$base" --depth=1 --vocab_size=512 > "$tmp/setup.log" 2>&1 || fail "setup: $(cat "$tmp/setup.log")"
grep -q 'using the tokenizer at' "$tmp/setup.log" || fail "setup did not keep the tokenizer: $(cat "$tmp/setup.log")"
common=(--base_dir="$base" --model_source=base --max_seq_len=96 --device_batch_size=2 --target_examples_per_step=2
        --max_iterations=5 --eval_every=2 --eval_steps=2 --eval_metrics_max_problems=2 --compile=false
        --num_threads=2 --init_lr_frac=1.0 --jsonl="$chats" --builtin_tasks=false)
data=(--jsonl="$chats" --builtin_tasks=false --max_seq_len=96 --device_batch_size=2)

for packing in pad bestfit; do
  log="$tmp/train_$packing.log"
  "$trainer" "${common[@]}" --packing=$packing --val_jsonl="$val" --output_dir="$tmp/run_$packing" > "$log" 2>&1 \
    || fail "training on --jsonl ($packing) failed: $(tail -20 "$log")"
  expect "^Training data: 12 rows: CustomJSON\($chats\) 12$" "$log"
  expect "^Validation data: 4 rows: CustomJSON\($val\) 4 \(--val_jsonl\)$" "$log"
  expect '^Training rows: 12; number of iterations: 5;' "$log"
  for s in 0 2 4; do expect "^Step 0000$s \| Validation loss: [0-9]+\.[0-9]{6}$" "$log"; done
  first=$(grep -oE '^Step 00000/00005 \| Training loss: [0-9.]+' "$log" | awk '{print $NF}')
  last=$(grep -oE '^Step 00003/00005 \| Training loss: [0-9.]+' "$log" | awk '{print $NF}')
  awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }' || fail "$packing: training loss did not fall: $first -> $last"
  v0=$(grep -oE '^Step 00000 \| Validation loss: [0-9.]+' "$log" | awk '{print $NF}')
  v4=$(grep -oE '^Step 00004 \| Validation loss: [0-9.]+' "$log" | awk '{print $NF}')
  awk -v a="$v0" -v b="$v4" 'BEGIN { exit !(b < a) }' || fail "$packing: held-out loss did not fall: $v0 -> $v4"
  [[ -f "$tmp/run_$packing/step_000004/model_000004.safetensors" ]] || fail "$packing: no checkpoint: $(ls -R "$tmp/run_$packing")"
  expect 'Checkpoint reloaded bit-exactly' "$log"

  # The trainer's batches are dump_batch's for the same flags: the same supervised tokens,
  # step by step (one micro-batch per step on one rank).
  "$dump_batch" --tokenizer="$base/tokenizer/tokenizer.txt" "${data[@]}" --packing=$packing --num_batches=4 --json \
    > "$tmp/batches_$packing.jsonl" 2> "$tmp/err.log" || fail "dump_batch $packing: $(cat "$tmp/err.log")"
  want=$(grep -oE '"supervised_tokens":[0-9]+' "$tmp/batches_$packing.jsonl" | cut -d: -f2 | tr '\n' ' ')
  got=$(grep -oE '"supervised_tokens":[0-9]+' "$tmp/run_$packing/metrics.jsonl" | cut -d: -f2 | tr '\n' ' ')
  [[ "$got" == "$want" ]] || fail "$packing: the trainer's supervised tokens per step ($got) are not dump_batch's ($want)"
  echo "$packing: loss $first -> $last, held-out loss $v0 -> $v4, supervised tokens per step $got"
done

# Without --val_jsonl the validation loss is the built-in tasks' held-out split: the same
# training (same losses), another validation loss.
"$trainer" "${common[@]}" --packing=pad --output_dir="$tmp/run_builtin_val" > "$tmp/builtin_val.log" 2>&1 \
  || fail "training without --val_jsonl failed: $(tail -20 "$tmp/builtin_val.log")"
expect '^Validation data: [0-9,]+ rows: SpellingBee .* \(the built-in tasks'"'"' held-out split: no --val_jsonl\)$' "$tmp/builtin_val.log"
train_loss() { grep -oE '^Step 00003/00005 \| Training loss: [0-9.]+' "$1" | awk '{print $NF}'; }
val_loss() { grep -oE '^Step 00004 \| Validation loss: [0-9.]+' "$1" | awk '{print $NF}'; }
[[ "$(train_loss "$tmp/builtin_val.log")" == "$(train_loss "$tmp/train_pad.log")" ]] \
  || fail "the validation set changed the training"
[[ "$(val_loss "$tmp/builtin_val.log")" != "$(val_loss "$tmp/train_pad.log")" ]] \
  || fail "--val_jsonl did not change what validation measures"

# Mixed with the built-in tasks (the default), the user's file oversampled twice.
"$trainer" "${common[@]}" --builtin_tasks=true --jsonl_repeat=2 --max_iterations=2 --val_jsonl="$val" \
  --output_dir="$tmp/run_mixed" > "$tmp/mixed.log" 2>&1 || fail "mixed training failed: $(tail -20 "$tmp/mixed.log")"
expect "^Training data: 6,024 rows: SpellingBee 2000, SimpleSpelling 2000, SyntheticMultipleChoice 2000, CustomJSON\($chats\) 12 x2$" "$tmp/mixed.log"

# Bad data flags and files: the flag, file and line named; exit 2 (flags) or 1 (contents);
# nothing written.
printf '[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]\n\n[{"role":"user","content":"a"},{"role":' \
  > "$tmp/broken.jsonl"
printf '[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]\n[{"role":"user","content":"a"},{"role":"user","content":"b"}]\n' \
  > "$tmp/roles.jsonl"
printf '[{"role":"system","content":"s"},{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"image","text":"x"}]}]\n' \
  > "$tmp/parts.jsonl"
bad() {  # expected exit code, expected text, then the trainer's extra flags
  local code="$1" want="$2"; shift 2
  local out="$tmp/never_$RANDOM"
  "$trainer" "${common[@]}" --output_dir="$out" "$@" > "$tmp/bad.log" 2>&1
  local rc=$?
  [[ $rc == "$code" ]] || fail "exit $rc, not $code, for $*: $(tail -5 "$tmp/bad.log")"
  grep -qF -- "$want" "$tmp/bad.log" || fail "error for '$*' does not say '$want': $(cat "$tmp/bad.log")"
  [[ ! -e "$out" ]] || fail "a refused run created $out"
  grep -q 'Training loss' "$tmp/bad.log" && fail "a refused run trained: $*"
}
bad 2 "--jsonl=$tmp/missing.jsonl: cannot open (missing file, or not a regular file)" --jsonl="$tmp/missing.jsonl"
bad 2 "--val_jsonl=$tmp: cannot open" --val_jsonl="$tmp"
bad 2 "--val_jsonl=$chats is also a --jsonl file" --val_jsonl="$chats"
bad 2 "--builtin_tasks=false and no --jsonl: nothing to train on" --jsonl=
bad 2 "--jsonl_repeat=0 must be >= 1" --jsonl_repeat=0
bad 1 "--jsonl: $tmp/broken.jsonl:3: malformed JSON" --jsonl="$tmp/broken.jsonl"
bad 1 "--jsonl: $tmp/roles.jsonl:2: messages[1]: role is user but assistant was expected" --jsonl="$tmp/roles.jsonl"
bad 1 "--val_jsonl: $tmp/parts.jsonl:1: messages[2].content[0] has unknown part type \"image\"" --val_jsonl="$tmp/parts.jsonl"
echo "PASS"
