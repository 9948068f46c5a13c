#!/usr/bin/env bash
# End to end over //trainer:loss: tok_train writes a tokenizer, random_checkpoint a
# nanochat-initialised model (lm_head = 0, so every logit is 0 and any batch's loss is
# exactly ln(vocab)), dump_batch --json the batches; //trainer:loss must print ln(vocab) as
# its last line, for padded and for best-fit packed batches. Bad flags and files exit 2 and
# name the flag or file at fault.
set -uo pipefail
tok_train="$1"; dump_batch="$2"; random_checkpoint="$3"; loss="$4"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
vocab=512

"$tok_train" --input=external/english_text/GPL-3 --vocab_size=$vocab --output="$tmp/tok.bpe" > "$tmp/tok.log" 2>&1 \
  || fail "tok_train: $(cat "$tmp/tok.log")"
grep -q "^vocab_size: $vocab" "$tmp/tok.log" || fail "tok_train did not reach vocab_size $vocab: $(cat "$tmp/tok.log")"
"$random_checkpoint" --output_dir="$tmp/ckpt" --vocab_size=$vocab --sequence_len=128 --step=5 > /dev/null 2> "$tmp/err.log" \
  || fail "random_checkpoint: $(cat "$tmp/err.log")"
[[ -f "$tmp/ckpt/model_000005.safetensors" && -f "$tmp/ckpt/meta_000005.json" ]] || fail "no checkpoint files written"

expected=$(python3 -c "import math; print(math.log($vocab))" 2>/dev/null || echo 6.238324625)
close_to_expected() {  # $1: the number; |x - ln V| < 1e-4, and finite
  awk -v x="$1" -v e="$expected" 'BEGIN { d = x - e; if (d < 0) d = -d; exit !(x == x + 0 && d < 1e-4) }'
}

for packing in pad bestfit; do
  batches="$tmp/batches_$packing.json"
  "$dump_batch" --tokenizer="$tmp/tok.bpe" --packing=$packing --device_batch_size=2 --max_seq_len=64 --num_batches=2 \
    --examples_per_task=20 --json --output="$batches" 2> "$tmp/err.log" || fail "dump_batch $packing: $(cat "$tmp/err.log")"
  "$loss" --checkpoint_dir="$tmp/ckpt" --batches="$batches" --num_threads=1 > "$tmp/out.txt" 2> "$tmp/err.log" \
    || fail "loss $packing: $(cat "$tmp/err.log")"
  value=$(tail -n 1 "$tmp/out.txt")
  close_to_expected "$value" || fail "$packing: loss $value, expected ln($vocab) = $expected"
  grep -q "batch 2/2" "$tmp/err.log" || fail "$packing: no progress on stderr: $(cat "$tmp/err.log")"
  echo "$packing: loss $value (ln $vocab = $expected)"
done
grep -q "packed" "$tmp/err.log" || fail "best-fit batches did not run the packed step: $(cat "$tmp/err.log")"

# --step names an existing step; relative paths resolve against BUILD_WORKING_DIRECTORY.
(cd "$tmp" && BUILD_WORKING_DIRECTORY="$tmp" "$OLDPWD/$loss" --checkpoint_dir=ckpt --step=5 \
  --batches=batches_pad.json > "$tmp/out.txt" 2> "$tmp/err.log") || fail "relative paths: $(cat "$tmp/err.log")"
close_to_expected "$(tail -n 1 "$tmp/out.txt")" || fail "relative paths: wrong loss"

# Each bad case exits 2 and names what is at fault.
expect_error() {  # $1: text the error must contain; the rest: the flags
  local want="$1"; shift
  "$loss" "$@" > "$tmp/out.txt" 2> "$tmp/err.log"
  local rc=$?
  [[ $rc -eq 2 ]] || fail "loss $* exited $rc, expected 2"
  grep -q -- "$want" "$tmp/err.log" || fail "loss $*: error does not name '$want': $(cat "$tmp/err.log")"
}
good=(--checkpoint_dir="$tmp/ckpt" --batches="$tmp/batches_pad.json")
expect_error "--compile" "${good[@]}" --compile
expect_error "--checkpoint_dir" --batches="$tmp/batches_pad.json"
expect_error "--batches" --checkpoint_dir="$tmp/ckpt"
expect_error "missing.json" --checkpoint_dir="$tmp/ckpt" --batches="$tmp/missing.json"
expect_error "--step=7" "${good[@]}" --step=7
expect_error "$tmp/nockpt" --checkpoint_dir="$tmp/nockpt" --batches="$tmp/batches_pad.json"
expect_error "--num_threads" "${good[@]}" --num_threads=-1
head -c 100 "$tmp/batches_pad.json" > "$tmp/cut.json"
expect_error "cut.json:1" --checkpoint_dir="$tmp/ckpt" --batches="$tmp/cut.json"
# Token ids the model's vocabulary does not hold: a checkpoint with a smaller vocab.
"$random_checkpoint" --output_dir="$tmp/small" --vocab_size=300 --sequence_len=128 > /dev/null 2>&1 || fail "small ckpt"
expect_error "outside the checkpoint's vocabulary" --checkpoint_dir="$tmp/small" --batches="$tmp/batches_pad.json"
echo "trainer loss: ok"
