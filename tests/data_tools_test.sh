#!/usr/bin/env bash
# End to end over the data tools: tok_train writes a tokenizer that dump_batch loads, and
# dump_batch --json emits exactly [B, T] batches with every key replay needs. Bad input
# (missing or malformed files) exits non-zero, names the file, and leaves no output file.
set -uo pipefail
tok_train="$1"; dump_batch="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$tok_train" --input=external/english_text/GPL-3,external/wordlist/words --vocab_size=2048 \
  --output="$tmp/tok.bpe" > "$tmp/tok.log" 2>&1 || fail "tok_train failed: $(cat "$tmp/tok.log")"
grep -q '^vocab_size: 2048' "$tmp/tok.log" || fail "tok_train did not report vocab_size 2048"

for packing in pad bestfit; do
  out="$tmp/batches_$packing.jsonl"
  "$dump_batch" --tokenizer="$tmp/tok.bpe" --packing=$packing --max_seq_len=256 --num_batches=3 \
    --examples_per_task=50 --json --output="$out" 2> "$tmp/err.log" || fail "dump_batch $packing: $(cat "$tmp/err.log")"
  [[ $(wc -l < "$out") -eq 3 ]] || fail "expected 3 JSON lines for $packing"
  for key in '"inputs_shape":\[4,256\]' '"targets_shape":\[4,256\]' '"inputs":' '"targets":' \
             '"segment_ids":' '"positions":' '"supervised_tokens":'; do
    [[ $(grep -c "$key" "$out") -eq 3 ]] || fail "$packing: key $key missing from a batch"
  done
done

# A missing JSONL file: non-zero exit, the file named, no output written.
if "$dump_batch" --tokenizer="$tmp/tok.bpe" --jsonl="$tmp/missing.jsonl" --output="$tmp/never.jsonl" 2> "$tmp/err.log"; then
  fail "dump_batch accepted a missing --jsonl file"
fi
grep -q "missing.jsonl" "$tmp/err.log" || fail "error does not name the missing file: $(cat "$tmp/err.log")"
[[ ! -e "$tmp/never.jsonl" ]] || fail "a failed dump_batch left an output file"

# A malformed line: the error names file:line.
printf '[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]\n[{"role":\n' > "$tmp/bad.jsonl"
if "$dump_batch" --tokenizer="$tmp/tok.bpe" --jsonl="$tmp/bad.jsonl" 2> "$tmp/err.log"; then
  fail "dump_batch accepted a malformed JSONL line"
fi
grep -q "bad.jsonl:2: malformed JSON" "$tmp/err.log" || fail "error does not name bad.jsonl:2: $(cat "$tmp/err.log")"

# tok_train on a missing file: non-zero, no output.
if "$tok_train" --input="$tmp/nope.txt" --output="$tmp/never.bpe" 2> "$tmp/err.log"; then
  fail "tok_train accepted a missing input"
fi
[[ ! -e "$tmp/never.bpe" ]] || fail "a failed tok_train left an output file"
# Bad flags are named before any work.
for bad in "--device_batch_size=0" "--max_seq_len=-1" "--rank=2 --world_size=2" "--packing=tight"; do
  flag="${bad%%=*}"
  if "$dump_batch" --tokenizer="$tmp/tok.bpe" $bad 2> "$tmp/err.log"; then fail "dump_batch accepted $bad"; fi
  grep -q -- "$flag" "$tmp/err.log" || fail "error for $bad does not name $flag: $(cat "$tmp/err.log")"
done
echo "data tools: ok"
