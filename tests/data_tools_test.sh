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
"$dump_batch" --tokenizer="$tmp/tok.bpe" --jsonl="$tmp/bad.jsonl" 2> "$tmp/err.log"
rc=$?
[[ $rc == 1 ]] || fail "dump_batch on a malformed JSONL line: rc $rc, not 1 (the trainer's code for bad data)"
grep -q "bad.jsonl:2: malformed JSON" "$tmp/err.log" || fail "error does not name bad.jsonl:2: $(cat "$tmp/err.log")"

# The user's conversations alone (system messages, assistant parts), the held-out split, and
# --seed; the trainer takes the same flags (data/pipeline/training_data.h).
chats=data/testdata/chats.jsonl; val=data/testdata/chats_val.jsonl
"$dump_batch" --tokenizer="$tmp/tok.bpe" --jsonl=$chats --builtin_tasks=false --max_seq_len=64 --num_batches=2 \
  > "$tmp/user.txt" 2> "$tmp/err.log" || fail "dump_batch --jsonl: $(cat "$tmp/err.log")"
grep -q "^Training data: 12 rows: CustomJSON($chats) 12$" "$tmp/err.log" || fail "no training-data line: $(cat "$tmp/err.log")"
grep -q "train rows 12" "$tmp/user.txt" || fail "not the user's 12 rows: $(cat "$tmp/user.txt")"
"$dump_batch" --tokenizer="$tmp/tok.bpe" --jsonl=$chats --val_jsonl=$val --split=val --builtin_tasks=false \
  --max_seq_len=64 --num_batches=1 > "$tmp/val.txt" 2> "$tmp/err.log" || fail "dump_batch --split=val: $(cat "$tmp/err.log")"
grep -q "val rows 4" "$tmp/val.txt" || fail "--split=val did not show the 4 held-out rows: $(cat "$tmp/val.txt")"
grep -q "^Validation data: 4 rows: CustomJSON($val) 4 (--val_jsonl)$" "$tmp/err.log" || fail "no validation-data line: $(cat "$tmp/err.log")"
for run in 1:a 1:b 2:a; do
  "$dump_batch" --tokenizer="$tmp/tok.bpe" --examples_per_task=20 --max_seq_len=64 --num_batches=2 --json \
    --seed="${run%:*}" > "$tmp/seed_$run" 2> "$tmp/err.log" || fail "dump_batch --seed=${run%:*}: $(cat "$tmp/err.log")"
done
cmp -s "$tmp/seed_1:a" "$tmp/seed_1:b" || fail "the same --seed gave different batches"
cmp -s "$tmp/seed_1:a" "$tmp/seed_2:a" && fail "--seed=1 and --seed=2 gave the same batches"
# Started directly (as from bazel-bin/data/dump_batch), from another directory and without
# the test's runfiles variables: it still finds its bundled word list, in the runfiles tree
# beside the binary. The binary is copied beside a tree made from the test's own runfiles
# (they hold the binary's): bazel-bin's own tree is built for top-level targets only, and on
# a cold build it may not exist yet when this test runs.
mkdir -p "$tmp/bin"
cp -L "$dump_batch" "$tmp/bin/dump_batch"
ln -s "${TEST_SRCDIR:?TEST_SRCDIR unset: run under bazel test}" "$tmp/bin/dump_batch.runfiles"
abs_dump_batch="$tmp/bin/dump_batch"
(cd "$tmp" && env -u RUNFILES_DIR -u TEST_SRCDIR -u RUNFILES_MANIFEST_FILE "$abs_dump_batch" --tokenizer="$tmp/tok.bpe" \
  --examples_per_task=5 --max_seq_len=64 --num_batches=1 > "$tmp/direct.txt" 2> "$tmp/err.log") \
  || fail "dump_batch started directly: $(cat "$tmp/err.log")"
grep -q "train rows 15" "$tmp/direct.txt" || fail "started directly: $(cat "$tmp/direct.txt")"

# Bad data flags: each named, with the file and line where there is one.
printf '[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]\n[{"role":"assistant","content":"b"}]\n' \
  > "$tmp/roles.jsonl"
expect_data_error() {  # $1: text the error must contain; the rest: dump_batch's flags
  local want="$1"; shift
  if "$dump_batch" --tokenizer="$tmp/tok.bpe" --max_seq_len=64 --num_batches=1 "$@" 2> "$tmp/err.log" > /dev/null; then
    fail "dump_batch accepted $*"
  fi
  grep -qF -- "$want" "$tmp/err.log" || fail "error for $* does not say '$want': $(cat "$tmp/err.log")"
}
expect_data_error "--jsonl: $tmp/roles.jsonl:2: messages[0]: role is assistant but user was expected" --jsonl="$tmp/roles.jsonl"
expect_data_error "--val_jsonl=$tmp/nope.jsonl: cannot open" --val_jsonl="$tmp/nope.jsonl"
expect_data_error "is also a --jsonl file" --jsonl=$chats --val_jsonl=$chats
expect_data_error "--builtin_tasks=false and no --jsonl" --builtin_tasks=false
expect_data_error "--split=test is not one of: train, val" --split=test
expect_data_error "--jsonl_repeat=0 must be >= 1" --jsonl=$chats --jsonl_repeat=0

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
