#!/usr/bin/env bash
# End to end over //trainer:validate on the embedded demo (tiny config): one invocation runs
# the eager, compiled, warm-start and 2-rank trainer tests and writes VALIDATION_REPORT.md,
# validation_report.json and three PNG plots, every criterion measured and the exit status 0;
# with the planted fault (--test_only_plant_recompile) the recompilation criterion is crossed,
# the compiled tests are marked failed, the report is still written and the exit status is 1;
# a flag validate sets itself is refused with exit status 2.
set -uo pipefail
validate="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
base="$tmp/base"
python=/usr/bin/python3
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -qF -- "$1" "$2" || fail "no '$1' in $2: $(head -60 "$2")"; }
# Tiny: 7 optimizer steps, so steps 5 and 6 are timed (warm-up 5), evaluations every 4.
tiny=(--max_iterations=8 --eval_every=4 --eval_steps=2 --eval_metrics_max_problems=4 --num_threads=1)
# json FILE EXPR: prints the Python expression EXPR over the report `r`.
json() { "$python" -c "import json, sys; r = json.load(open(sys.argv[1])); print($2)" "$1"; }

# 1. A clean run: exit 0, everything written, every criterion measured but the optional PyTorch
# eager baseline, which tests never run (--torch_eager=none): stated as not measured, exit 0.
run="$tmp/run_ok"
"$validate" --demo --base_dir="$base" --run_dir="$run" --torch_eager=none "${tiny[@]}" > "$tmp/ok.log" 2>&1
rc=$?
[[ $rc -eq 0 ]] || fail "validate exited $rc: $(tail -40 "$tmp/ok.log")"
md="$run/VALIDATION_REPORT.md"
data="$run/validation_report.json"
for f in "$md" "$data" "$run/loss.png" "$run/tokens_per_second.png" "$run/memory.png"; do
  [[ -s "$f" ]] || fail "$f missing or empty: $(ls "$run")"
done
for png in loss tokens_per_second memory; do
  [[ "$(head -c 4 "$run/$png.png" | tail -c 3)" == PNG ]] || fail "$png.png is not a PNG"
  expect "]($png.png)" "$md"
done
for t in test1_eager test2_compiled test2b_compiled_warm test3_compiled_2ranks; do
  for f in metrics.jsonl run_summary.json trainer.log; do [[ -s "$run/$t/$f" ]] || fail "no $t/$f"; done
  ls "$run/$t"/step_*/ | grep -q '^model_.*\.safetensors$' || fail "no checkpoint in $t: $(ls -R "$run/$t")"
done
[[ $(json "$data" 'r["exit_code"]') == 0 ]] || fail "JSON exit_code is not 0"
[[ $(json "$data" 'len(r["criteria"])') == 11 ]] || fail "not 11 criteria"
unmeasured=$(json "$data" '[c["id"] for c in r["criteria"] if c["status"] == "not_measured" or c["value"] is None]')
[[ "$unmeasured" == "['speedup_vs_torch_eager']" ]] || fail "criteria without a measured value: $unmeasured"
[[ $(json "$data" '[c["optional"] for c in r["criteria"] if c["id"] == "speedup_vs_torch_eager"]') == "[True]" ]] \
  || fail "the PyTorch eager criterion is not optional"
[[ $(json "$data" 'r["torch_eager"]["why_not"]') == "--torch_eager=none" ]] || fail "no reason for the torch baseline"
failed=$(json "$data" '[c["id"] for c in r["criteria"] if c["kind"] == "correctness" and c["status"] != "pass"]')
[[ "$failed" == "[]" ]] || fail "correctness checks failed: $failed"
[[ $(json "$data" '[t["status"] for t in r["tests"]]') == "['passed', 'passed', 'passed', 'passed']" ]] \
  || fail "not every test passed"
[[ $(json "$data" 'r["tests"][3]["summary"]["world_size"]') == 2 ]] || fail "Test 3 did not run on 2 ranks"
[[ $(json "$data" 'r["tests"][1]["figures"]["cache_hit"]') == False ]] || fail "Test 2 did not compile cold"
[[ $(json "$data" 'r["tests"][2]["figures"]["cache_hit"]') == True ]] || fail "Test 2b was no cache hit"
[[ $(json "$data" 'r["tests"][1]["figures"]["measured_steps"]') == 2 ]] || fail "Test 2 should time steps 5 and 6"
[[ $(json "$data" 'r["plots"]["made"]') == True ]] || fail "no plots: $(json "$data" 'r["plots"]["error"]')"
[[ $(json "$data" 'r["environment"]["cpu_cores"]') -ge 1 ]] || fail "no core count"
# Same data in both files: the markdown shows the JSON's verdict and figures.
expect "**$(json "$data" 'r["verdict"]')** (exit status 0)" "$md"
expect "- [x] ✅ **No recompilation in training or evaluation**" "$md"
expect "- [x] ✅ **One static batch shape [B, T] in every test** (check, \`static_shapes\`): every micro-batch of " "$md"
expect "| Batch shapes | all [4, 512] | all [4, 512] | all [4, 512] | all [4, 512] |" "$md"
expect "artifact $(json "$data" 'r["tests"][1]["figures"]["artifact_key"]') (Test 2's)" "$md"
expect "| CPU | $(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//') |" "$md"
expect "| Cores | $(getconf _NPROCESSORS_ONLN) online" "$md"
expect "| matplotlib (plots) (python3-matplotlib) | $(dpkg-query -W -f='${Version}' python3-matplotlib) |" "$md"
expect "--compile=false --device=cpu --output_dir=$run/test1_eager --compile_cache_dir=$run/compile_cache" "$md"
expect "(target, optional, \`speedup_vs_torch_eager\`): not measured: --torch_eager=none" "$md"
expect "**PyTorch eager: not measured:** --torch_eager=none" "$md"
grep -v -e speedup_vs_torch_eager -e 'PyTorch eager: not measured' "$md" | grep -q "not measured" \
  && fail "a figure is not measured in a clean run: $(grep -n 'not measured' "$md")"
grep -q '\[test2\] ' "$tmp/ok.log" || fail "the trainers' output was not echoed"

# 2. The planted fault: the compiled tests recompile once; the report says so and fails.
run="$tmp/run_fault"
"$validate" --demo --base_dir="$base" --run_dir="$run" "${tiny[@]}" --test_only_plant_recompile \
  > "$tmp/fault.log" 2>&1
rc=$?
[[ $rc -eq 1 ]] || fail "validate with a planted recompilation exited $rc, want 1: $(tail -40 "$tmp/fault.log")"
md="$run/VALIDATION_REPORT.md"
data="$run/validation_report.json"
[[ -s "$md" && -s "$data" ]] || fail "no report after the planted fault: $(ls "$run")"
[[ $(json "$data" '[c["status"] for c in r["criteria"] if c["id"] == "no_recompilation"]') == "['fail']" ]] \
  || fail "the recompilation criterion is not crossed"
failed=$(json "$data" '[c["id"] for c in r["criteria"] if c["kind"] == "correctness" and c["status"] != "pass"]')
[[ "$failed" == "['no_recompilation']" ]] || fail "other checks than no_recompilation failed: $failed"
[[ $(json "$data" 'r["tests"][0]["status"]') == passed ]] || fail "the eager test was blamed"
[[ $(json "$data" 'r["tests"][1]["status"]') == failed ]] || fail "Test 2 is not marked failed"
expect "- [ ] ❌ **No recompilation in training or evaluation** (check, \`no_recompilation\`): FAILED: test2: 1 training" "$md"
expect "**FAILED: failed tests: test2" "$md"
expect "| Planted fault |" "$md"
expect "--test_only_force_recompile" "$md"

# 3. A flag validate sets per test is refused before any work.
"$validate" --demo --base_dir="$base" --run_dir="$tmp/run_bad" --output_dir=/x > "$tmp/bad.log" 2>&1
rc=$?
[[ $rc -eq 2 ]] || fail "--output_dir was not refused (exit $rc)"
expect "--output_dir is set by validate for each test; leave it out" "$tmp/bad.log"
[[ ! -e "$tmp/run_bad" ]] || fail "a refused command line still created its run dir"
echo PASS
