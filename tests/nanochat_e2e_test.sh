#!/usr/bin/env bash
# nanochat in and out through the binaries: //trainer fine-tunes a nanochat checkpoint written
# by real PyTorch (--init_from, its tokenizer.pkl found in the base dir's tokenizer/),
# //trainer:export_nanochat writes the result as nanochat's files, and //trainer starts again
# from that export: its first validation loss is the first run's last (the same weights, wte
# rounded to bf16 by the export, as nanochat stores it). Bad --init_from input is an error
# naming the flag, before any work.
set -uo pipefail
trainer="$1"; export_nanochat="$2"
golden="tests/nanochat/base"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -qE -- "$1" "$2" || fail "no line matching '$1' in $2: $(tail -20 "$2")"; }
small=(--max_seq_len=512 --device_batch_size=2 --target_examples_per_step=4 --eval_steps=1
       --eval_metrics_every=100 --eval_metrics_max_problems=4 --compile=false --num_threads=2)

# 1. SFT from the nanochat checkpoint directory.
"$trainer" --init_from="$golden/base_checkpoints/d2" --base_dir="$tmp/ours" --max_iterations=3 --eval_every=2 \
  "${small[@]}" > "$tmp/one.log" 2>&1 || fail "--init_from failed: $(tail -20 "$tmp/one.log")"
expect "^Loading the nanochat model from $golden/base_checkpoints/d2/model_000007.pt$" "$tmp/one.log"
expect '^Step 00002 \| Validation loss: [0-9]+\.[0-9]{6}$' "$tmp/one.log"
first=$(grep -oE '^Step 00000 \| Validation loss: [0-9.]+' "$tmp/one.log" | awk '{print $NF}')
trained=$(grep -oE '^Step 00002 \| Validation loss: [0-9.]+' "$tmp/one.log" | awk '{print $NF}')

# 2. Export the fine-tuned checkpoint as a nanochat base dir.
"$export_nanochat" --base_dir="$tmp/ours" --tokenizer="$golden/tokenizer/tokenizer.pkl" \
  --output_base_dir="$tmp/nanochat" > "$tmp/export.log" 2>&1 || fail "export failed: $(cat "$tmp/export.log")"
for f in chatsft_checkpoints/d2/model_000002.pt chatsft_checkpoints/d2/meta_000002.json tokenizer/tokenizer.pkl; do
  [[ -s "$tmp/nanochat/$f" ]] || fail "the export has no $f: $(cat "$tmp/export.log")"
done
[[ -n "$(find "$tmp/nanochat" -name "*.tmp.*")" ]] && fail "a temp file was left in the export"

# 3. SFT from the export (the .pt file named directly; tokenizer.pkl found in <base>/tokenizer/).
"$trainer" --init_from="$tmp/nanochat/chatsft_checkpoints/d2/model_000002.pt" --base_dir="$tmp/again" \
  --max_iterations=2 --eval_every=1 "${small[@]}" > "$tmp/two.log" 2>&1 || fail "re-import failed: $(tail -20 "$tmp/two.log")"
again=$(grep -oE '^Step 00000 \| Validation loss: [0-9.]+' "$tmp/two.log" | awk '{print $NF}')
awk -v a="$trained" -v b="$again" -v f="$first" 'BEGIN { d = a - b; if (d < 0) d = -d; g = a - f; if (g < 0) g = -g;
  exit !(d < 2e-3 && g > 10 * d) }' \
  || fail "the exported weights are not the trained ones: validation loss $trained after training, $again after the round trip (untrained: $first)"

# 4. Errors name the flag, before any work.
"$trainer" --init_from="$tmp/none" --base_dir="$tmp/err" "${small[@]}" > "$tmp/err.log" 2>&1 && fail "a missing --init_from ran"
expect "^trainer: error: --init_from: $tmp/none: no such file or directory" "$tmp/err.log"
"$trainer" --init_tokenizer="$golden/tokenizer/tokenizer.pkl" --base_dir="$tmp/err" "${small[@]}" > "$tmp/err.log" 2>&1 \
  && fail "--init_tokenizer without --init_from ran"
expect "--init_tokenizer=.* names the tokenizer of --init_from, which is not given" "$tmp/err.log"
"$trainer" --init_from="$golden/base_checkpoints/d2" --step=3 --base_dir="$tmp/err" "${small[@]}" > "$tmp/err.log" 2>&1 \
  && fail "--init_from with --step ran"
expect "names the checkpoint itself; drop --model_tag and --step" "$tmp/err.log"
[[ -e "$tmp/err" ]] && fail "a failed start created $tmp/err"
echo "PASS: first validation loss $first, trained $trained, after export and re-import $again"
