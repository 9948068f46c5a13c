#!/usr/bin/env bash
# A step compiled with --attention=cudnn, run where no GPU can be opened, is one clear error
# (exit 2) naming --device and the way out, --attention=generated; nothing crashes. The
# driver library is forced missing, so the test means the same on a machine with a GPU.
# Usage: cudnn_attention_no_gpu_test.sh GPTC RUN_STEP_CUDA
set -euo pipefail
gptc="$1"
run_step="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

"$gptc" --depth=1 --n_embd=128 --n_head=2 --n_kv_head=1 --vocab=512 --batch=2 --seq=64 --target=cuda \
  --attention=cudnn --emit=artifact --output="$tmp/step.gptart" 2>"$tmp/gptc.log"
grep -qa 'sdpa_fwd.cudnn' "$tmp/step.gptart" || { cat "$tmp/gptc.log"; echo "FAIL: no sdpa builtin in the artifact"; exit 1; }

status=0
GPT_SFT_LIBCUDA=libcuda-that-is-not-installed.so.1 "$run_step" --artifact="$tmp/step.gptart" --device=cuda \
  --steps=1 >"$tmp/out.log" 2>"$tmp/err.log" || status=$?
cat "$tmp/err.log"
[[ $status -eq 2 ]] || { echo "FAIL: exit status $status, expected 2"; exit 1; }
for expected in 'run_step: --device: cuda: no NVIDIA driver' '--attention=cudnn' '--attention=generated'; do
  grep -qF -- "$expected" "$tmp/err.log" || { echo "FAIL: the error does not say '$expected'"; exit 1; }
done
[[ $(grep -c . "$tmp/err.log") -eq 1 ]] || { echo "FAIL: more than one line of error"; exit 1; }
echo "PASS"
