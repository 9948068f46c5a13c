#!/usr/bin/env bash
# The trainer with --device=opencl end to end: the demo (3 iterations) trains with every kernel
# the compiler generated running on the OpenCL device here (PoCL), evaluates and checkpoints
# from the ParamStore synced back from the device, and its [VALIDATION] lines name the device.
# An OpenCL runtime with no device is one error naming --device, exit 2, before any file.
set -uo pipefail
trainer="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
base="$tmp/base"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -qE -- "$1" "$2" || fail "no line matching '$1' in $2: $(tail -20 "$2")"; }

NANOCHAT_BASE_DIR="$base" "$trainer" --demo --device=opencl --max_iterations=3 --eval_every=2 --eval_steps=2 \
  --eval_metrics_max_problems=8 > "$tmp/demo.log" 2>&1 || fail "demo on opencl failed: $(tail -20 "$tmp/demo.log")"
log="$tmp/demo.log"
expect '^\[VALIDATION\] ✓ Model is compiled \(static batch \[4, 512\]; device opencl: [^;]+; artifact [0-9a-f]{16} for opencl, compiled in [0-9.]+ s; arena [0-9.]+ MiB, [0-9]+ launches per micro-step, [0-9]+ distinct kernels; matmuls: the compiler.s tiled gemm; attention: the compiler.s flash kernels\)$' "$log"
for s in 0 1; do expect "^\[VALIDATION\] Step $s batch shape: inputs \[4, 512\]" "$log"; done
expect '^Step 00000 \| Validation loss: [0-9]+\.[0-9]{6}$' "$log"
expect '^Step 00002 \| Validation loss: ' "$log"
expect '^\[VALIDATION\] ✓ Checkpoint reloaded bit-exactly' "$log"
expect '^\[VALIDATION\] Summary: compiled \(device opencl\) \| steps 2 .*recompilations 0 \(training\)' "$log"
grep -q '"device": "opencl"' "$base/chatsft_checkpoints/d2/run_summary.json" || fail "run_summary.json does not name the device"

# No OpenCL device: exit 2, naming --device, and nothing written.
OCL_ICD_VENDORS="$tmp/no_icds" NANOCHAT_BASE_DIR="$base" "$trainer" --device=opencl --max_iterations=2 \
  --output_dir="$tmp/never" > "$tmp/bad.log" 2>&1
rc=$?
[[ $rc == 2 ]] || fail "no OpenCL device: exit $rc, expected 2: $(cat "$tmp/bad.log")"
expect '^trainer: error: --device=opencl: .*no OpenCL platform' "$tmp/bad.log"
[[ -e "$tmp/never" ]] && fail "the refused run created its output dir"
echo "PASS"
