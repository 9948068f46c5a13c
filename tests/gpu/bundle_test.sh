#!/usr/bin/env bash
# The GPU bundle (small config only: the d20 artifact takes minutes to compile) builds, stays
# under 40 MiB, is ldd-complete both ways run.sh may start the runner (the host's glibc plus
# lib/, and the bundle's own loader with lib/glibc and lib/ and nothing from the host), and its
# runner starts: with no GPU here, run.sh --check must end with the cuda driver's one clear
# error and exit 2.
set -euo pipefail
make_bundle="$1"
print_synthetic_batch="$2"
bundle="$TEST_TMPDIR/bundle"

fail() { echo "FAIL: $*" >&2; exit 1; }

"$make_bundle" --small_only --out="$bundle"
for f in run.sh MANIFEST.json bin/run_step_cuda lib/glibc/VERSION lib/glibc/ld-linux-x86-64.so.2 \
         artifacts/small.gptart artifacts/small_tiled.gptart artifacts/small_reference.json \
         artifacts/small_bf16.gptart artifacts/small_bf16_reference.json artifacts/small_cudnn.gptart \
         artifacts/small_cudnn_reference.json peer/pytorch_peer.py peer/reference_gpt.py; do
  [[ -e "$bundle/$f" ]] || fail "the bundle has no $f"
done
python3 -c "import json,sys; json.load(open(sys.argv[1])); json.load(open(sys.argv[2]))" \
  "$bundle/MANIFEST.json" "$bundle/artifacts/small_reference.json" || fail "a JSON file of the bundle does not parse"
python3 -m py_compile "$bundle/peer/pytorch_peer.py" || fail "pytorch_peer.py does not compile"
# The peer trains on the very batches run_step makes (SplitMix64 in Python and C++).
"$print_synthetic_batch" 7 3 40 65536 >"$TEST_TMPDIR/batch_cc.json"
python3 "$bundle/peer/pytorch_peer.py" --mode=eager --print_batch --seed=7 --batch=3 --seq=40 --vocab=65536 >"$TEST_TMPDIR/batch_py.json"
python3 -c "import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); sys.exit(0 if a == b else 1)" \
  "$TEST_TMPDIR/batch_cc.json" "$TEST_TMPDIR/batch_py.json" || fail "the PyTorch peer's synthetic batch differs from run_step's"

size_kib="$(du -sk "$bundle" | cut -f1)"
(( size_kib < 40 * 1024 )) || fail "the bundle is ${size_kib} KiB, over 40 MiB"
echo "bundle: ${size_kib} KiB"

# ELF files only; the driver (libcuda) is loaded at run time by dlopen, never by ldd's list.
elves=()
while IFS= read -r -d '' f; do
  if head -c4 "$f" | grep -q $'\x7fELF'; then elves+=("$f"); fi
done < <(find "$bundle/bin" "$bundle/lib" -type f -print0)
(( ${#elves[@]} > 3 )) || fail "too few ELF files in the bundle: ${#elves[*]}"

glibc=" ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 linux-vdso.so.1 "
for f in "${elves[@]}"; do
  [[ "$f" == "$bundle/lib/glibc/"* ]] && continue
  # Route 1: the host's glibc, LD_LIBRARY_PATH=lib. Everything but glibc must come from lib/.
  listing="$(LD_LIBRARY_PATH="$bundle/lib" ldd "$f" 2>&1)" || fail "ldd $f: $listing"
  ! grep -q "not found" <<<"$listing" || fail "ldd $f misses a library: $listing"
  while read -r name arrow path _; do
    [[ "$arrow" == "=>" ]] || continue
    [[ "$glibc" == *" $name "* || "$path" == "$bundle/lib/"* ]] || fail "$f takes $name from the host ($path)"
  done <<<"$listing"
  # Route 2: the bundle's own loader: everything, glibc included, from the bundle.
  listing="$("$bundle/lib/glibc/ld-linux-x86-64.so.2" --library-path "$bundle/lib/glibc:$bundle/lib" --list "$f" 2>&1)" ||
    fail "the bundled loader cannot list $f: $listing"
  while read -r name arrow path _; do
    [[ "$arrow" == "=>" ]] || continue
    [[ "$path" == "$bundle/lib/"* ]] || fail "with the bundled loader $f takes $name from the host ($path)"
  done <<<"$listing"
done

# The runner starts both ways; with no GPU the answer is the cuda driver's clear error, exit 2.
for route in auto always; do
  set +e
  out="$(BUNDLE_GLIBC=$route OUT="$TEST_TMPDIR/out_$route" "$bundle/run.sh" --check 2>&1)"
  rc=$?
  set -e
  echo "run.sh --check (BUNDLE_GLIBC=$route): exit $rc: $out"
  [[ $rc -eq 2 ]] || fail "run.sh --check exited $rc, expected 2 (no GPU here)"
  grep -q "cuda" <<<"$out" || fail "run.sh --check did not name the cuda driver: $out"
done

# The whole script runs here too: every GPU part ends with the runner's no-GPU error (exit 2,
# not 126/127: each part's command really started), and the report is one JSON object.
OUT="$TEST_TMPDIR/out_full" "$bundle/run.sh" >"$TEST_TMPDIR/run_full.log" 2>&1 || fail "run.sh failed: $(tail -5 "$TEST_TMPDIR/run_full.log")"
python3 - "$TEST_TMPDIR/out_full/gpu_run.json" <<'PY' || fail "run.sh's report is wrong: $(cat "$TEST_TMPDIR/out_full/gpu_run.json")"
import json, sys
report = json.load(open(sys.argv[1]))
for tag in ("small", "small_tiled", "small_bf16", "small_cudnn"):
    part = report[tag]
    assert part["exit_status"] == 2, (tag, part)
    assert "no NVIDIA driver" in part["stderr_tail"], (tag, part)
    assert part["losses_match_interpreter"] is False, (tag, part)
assert report["d20"] is None, "a --small_only bundle has no d20 part"
assert "attention" not in report, "no d20 runs, so no attention comparison"
# The compiler's prediction rides along (H100's: no GPU here), and d20's is absent.
small = report["small_predicted"]
assert small["gpu"] == "h100" and small["tokens_per_second"] > 0 and 0 < small["mfu"] <= 1, small
assert small["seconds_per_step_by_op"]["gpt.matmul"] > 0, small
assert report["d20_predicted"] is None
assert report["bundle"]["small_only"] == 1
PY

# A failed build leaves the previous bundle in place.
touch "$bundle/keep_me"
if "$make_bundle" --small_only --out="$bundle" --no_such_flag 2>/dev/null; then fail "a bad flag was accepted"; fi
[[ -e "$bundle/keep_me" ]] || fail "a failed make_bundle removed the previous bundle"
echo PASS
