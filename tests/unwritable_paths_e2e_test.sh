#!/usr/bin/env bash
# Every binary that writes, pointed at a place it cannot write (a path under a regular file;
# a path under /proc, which no user may create in): a message naming the path and exit 1 or 2,
# never an uncaught exception (rc 134 "terminate called ...") or a crash.
set -uo pipefail
trainer="$1"; setup_base_model="$2"; export_nanochat="$3"; validate="$4"; dump_batch="$5"; tok_train="$6"
gptc="$7"; random_checkpoint="$8"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
touch "$tmp/a_file"
echo "the quick brown fox jumps over the lazy dog" > "$tmp/text.txt"
checked=0
"$setup_base_model" --base_dir="$tmp/ok" > "$tmp/setup.log" 2>&1 || fail "setup_base_model: $(tail "$tmp/setup.log")"

# $1: the path the binary must name; then the command.
refused() {
  local path="$1"; shift
  "$@" > "$tmp/out.log" 2>&1 < /dev/null
  local rc=$?
  [[ $rc == 1 || $rc == 2 ]] || fail "rc $rc (not 1 or 2) from: $*: $(tail -5 "$tmp/out.log")"
  grep -q "terminate called\|Aborted\|Segmentation" "$tmp/out.log" && fail "crashed: $*: $(tail -5 "$tmp/out.log")"
  grep -qF -- "$path" "$tmp/out.log" || fail "the message does not name $path: $*: $(tail -5 "$tmp/out.log")"
  checked=$((checked + 1))
}

for bad in "$tmp/a_file/sub" /proc/gpt_sft_forbidden/sub; do
  NANOCHAT_BASE_DIR="$bad" refused "$bad" "$trainer" --demo
  refused "$bad" "$trainer" --demo --base_dir="$bad"
  refused "$bad" "$setup_base_model" --base_dir="$bad"
  refused "$bad" "$random_checkpoint" --output_dir="$bad"
  refused "$bad" "$tok_train" --input="$tmp/text.txt" --vocab_size=300 --output="$bad/tok.txt"
  refused "$bad" "$dump_batch" --train_text="$tmp/text.txt" --vocab_size=300 --output="$bad/b.json"
  refused "$bad" "$gptc" --depth=1 --output="$bad/step.mlir"
  refused "$bad" "$validate" --demo --base_dir="$bad"
  refused "$bad" "$export_nanochat" --base_dir="$tmp/ok" --model_source=base --output_base_dir="$bad"
done
echo "PASS: $checked refusals"
