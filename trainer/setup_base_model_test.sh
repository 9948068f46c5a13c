#!/usr/bin/env bash
# //trainer:setup_base_model makes a tokenizer and a random base checkpoint of the asked size,
# keeps what exists on a second run, and refuses a tokenizer of another vocabulary by name.
set -uo pipefail
setup="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
base="$tmp/base"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$setup" --base_dir="$base" --depth=1 --vocab_size=600 > "$tmp/first.log" 2>&1 || fail "setup failed: $(cat "$tmp/first.log")"
grep -q 'training a 600-token BPE tokenizer' "$tmp/first.log" || fail "no tokenizer line: $(cat "$tmp/first.log")"
grep -q 'depth 1, width 64, 1 heads, vocabulary 600' "$tmp/first.log" || fail "no model line: $(cat "$tmp/first.log")"
[[ -f "$base/tokenizer/tokenizer.txt" ]] || fail "no tokenizer file"
ls "$base"/base_checkpoints/d1/model_000000.safetensors "$base"/base_checkpoints/d1/meta_000000.json > /dev/null \
  || fail "no checkpoint under $base/base_checkpoints/d1: $(ls -R "$base")"
sum=$(md5sum "$base"/base_checkpoints/d1/model_000000.safetensors "$base/tokenizer/tokenizer.txt")

"$setup" --base_dir="$base" --depth=1 --vocab_size=600 > "$tmp/second.log" 2>&1 || fail "second run failed"
grep -q 'using the tokenizer at' "$tmp/second.log" || fail "tokenizer not kept: $(cat "$tmp/second.log")"
grep -q 'using the base model at' "$tmp/second.log" || fail "model not kept: $(cat "$tmp/second.log")"
[[ "$(md5sum "$base"/base_checkpoints/d1/model_000000.safetensors "$base/tokenizer/tokenizer.txt")" == "$sum" ]] \
  || fail "a second run changed the files"

"$setup" --base_dir="$base" --depth=2 --vocab_size=700 > "$tmp/mismatch.log" 2>&1
rc=$?
[[ $rc == 2 ]] || fail "a vocabulary mismatch exited $rc, not 2"
grep -q "tokenizer.txt has 600 tokens but --vocab_size=700" "$tmp/mismatch.log" || fail "mismatch not named: $(cat "$tmp/mismatch.log")"
[[ ! -d "$base/base_checkpoints/d2" ]] || fail "a refused setup wrote a checkpoint"

"$setup" --depth=2 > "$tmp/noflag.log" 2>&1 && fail "no --base_dir accepted"
grep -q -- "--base_dir is required" "$tmp/noflag.log" || fail "missing --base_dir not named"
echo PASS
