#!/usr/bin/env bash
# The CPU kernels reach code compiled for an ISA level only through base/cpu_isa.h's decision.
# What a reader can check in the sources, checked here over every file of the package:
#  1. No kernel asks the CPU itself (CPUID, __builtin_cpu_supports, XCR0, AMX permission): one
#     place decides, and it applies GPT_SFT_CPU_ISA.
#  2. No dispatch outside that decision: no target_clones, ifunc or `#pragma GCC target`
#     (GCC would pick from CPUID at load time, past the cap).
#  3. Code compiled for a level (`gnu::target`) lives in a .cc file that asks CpuIsaAtLeast, or
#     in a header named for its level (*_avx2.h, *_avx512.h, *_amx.h) that only such files
#     include; the other headers (the kernels' public entry points) hold none.
#  4. The intrinsics come in through x86_intrinsics.h only (its warnings silenced there).
# What the sources cannot show (that every entry asks before it calls in) the kernel tests
# show by running on emulated AVX2 and SSE-only CPUs (*_on_emulated_* in BUILD).
set -uo pipefail
dir="${1:-runtime/kernels/cpu}"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

mapfile -t files < <(cd "$dir" && ls -- *.cc *.h)
[[ ${#files[@]} -gt 20 ]] || { echo "FAIL: found only ${#files[@]} sources under $dir"; exit 1; }

isa_header() { [[ "$1" =~ _(avx2|avx512|amx)\.h$ ]]; }

for f in "${files[@]}"; do
  path="$dir/$f"
  # Rule 1.
  if grep -nE '__builtin_cpu_(supports|is|init)|__get_cpuid|<cpuid\.h>|xgetbv|arch_prctl|ARCH_REQ_XCOMP' "$path"; then
    fail "$f asks the CPU itself; ask base/cpu_isa.h (CpuIsaAtLeast)"
  fi
  # Rule 2.
  if grep -nE 'target_clones|gnu::ifunc|__attribute__\(\(ifunc|#pragma GCC target' "$path"; then
    fail "$f dispatches on its own (target_clones, ifunc, #pragma GCC target)"
  fi
  # Rule 4.
  if [[ "$f" != x86_intrinsics.h ]] && grep -nE '#include <[a-z0-9]*intrin\.h>' "$path"; then
    fail "$f includes an intrinsics header directly; include runtime/kernels/cpu/x86_intrinsics.h"
  fi
  # Rule 3.
  grep -qE 'gnu::target|__attribute__\(\(target' "$path" || continue
  case "$f" in
    *.cc)
      grep -q '#include "base/cpu_isa.h"' "$path" || fail "$f has code compiled for an ISA level but does not include base/cpu_isa.h"
      grep -q 'CpuIsaAtLeast(' "$path" || fail "$f has code compiled for an ISA level but never asks CpuIsaAtLeast"
      ;;
    *.h)
      isa_header "$f" || fail "$f is a public header with code compiled for an ISA level; move it to a .cc or an *_avx512.h-style header"
      ;;
  esac
done

# Rule 3, second half: a level's header is included only by files that ask the decision (or
# by another level's header, or its own test).
for f in "${files[@]}"; do
  isa_header "$f" || continue
  for user in $(cd "$dir" && grep -l "#include \"runtime/kernels/cpu/$f\"" -- *.cc *.h); do
    isa_header "$user" && continue
    [[ "$user" == *_test.cc ]] && continue
    grep -q 'CpuIsaAtLeast(' "$dir/$user" || fail "$user includes $f but never asks CpuIsaAtLeast"
  done
done

if ((failures)); then
  echo "$failures problem(s)"
  exit 1
fi
echo "isa dispatch lint: ${#files[@]} files clean"
