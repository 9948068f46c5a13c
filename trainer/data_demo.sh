#!/usr/bin/env bash
# The data pipeline demo: the chat-SFT mixture at a static [B, T] with both packings.
set -euo pipefail
dump="${RUNFILES_DIR:-$0.runfiles}/gpt_sft/data/dump_batch"
[[ -x "$dump" ]] || dump="$(dirname "$0")/../data/dump_batch"
echo "[trainer] the training loop is not built yet; showing the data pipeline it will consume."
for packing in pad bestfit; do
  echo
  echo "[trainer] --packing=$packing"
  "$dump" --packing="$packing" --num_batches=2 "$@"
done
