#!/usr/bin/env bash
# The bench at each CPU ISA level this machine can run (base/cpu_isa.h): natively, then under
# GPT_SFT_CPU_ISA=avx2 and generic, with OpenBLAS's kernels matched to the cap (Haswell,
# Nehalem: OpenBLAS picks from CPUID when it loads, before the cap is read); fp32 then bf16;
# `rounds` times, alternating. Prints each run's ISA, kernels and step times.
#   trainer/bench/bench_isa_levels.sh [rounds] [bench flags...]
# e.g. after ./bazelw build //trainer/bench:bench:
#   trainer/bench/bench_isa_levels.sh 2 --steps=3 --mixture=false --peer=none --path=both
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bench="$root/bazel-bin/trainer/bench/bench"
[[ -x "$bench" ]] || { echo "bench_isa_levels.sh: build it first: ./bazelw build //trainer/bench:bench" >&2; exit 2; }
rounds="${1:-2}"
shift || true
for ((round = 1; round <= rounds; ++round)); do
  for cap in native avx2 generic; do
    case "$cap" in
      native) caps=() ;;
      avx2) caps=(GPT_SFT_CPU_ISA=avx2 OPENBLAS_CORETYPE=Haswell) ;;
      generic) caps=(GPT_SFT_CPU_ISA=generic OPENBLAS_CORETYPE=Nehalem) ;;
    esac
    for dtype in float32 bfloat16; do
      echo "=== round $round, level $cap, $dtype ${caps[*]:-}"
      env "${caps[@]}" "$bench" --dtype="$dtype" "$@" 2>&1 |
        grep -E "CPU ISA|full step|matmuls:|compiled vs interpreter" || true
    done
  done
done
