#!/usr/bin/env bash
# The rooms' layering, read from the source tree (docs/architecture.md: the rooms):
#
#   trainer -> {compiler, runtime, data}
#   compiler -> {ir, model, artifact}      runtime -> {ir, model, artifact}
#   ir, model, artifact -> nothing of ours but base/ (ir: MLIR)
#   data -> base/ only                      base -> nothing of ours
#
# Every C++/ODS file's `#include "room/..."` and every BUILD/.bzl label `//room...` (comments
# left out) is checked against the rooms its own room may not reach. The Bazel genquery
# tests in third_party/bazel/BUILD check the same rule on the transitive deps of chosen
# targets; this test covers every file, the tests included.
#
# Usage: layering_test.sh <any file of the workspace, e.g. $(rootpath //:WORKSPACE)>
# It follows that file to the source tree, so it must run uncached (tags = ["external"]).
# Before the real tree it checks a planted violation, so it is known to be able to fail.
set -euo pipefail

# forbidden[room] = rooms that no file under room/ may name.
declare -A forbidden=(
  [base]="compiler ir model artifact runtime trainer data tests"
  [data]="compiler ir model artifact runtime trainer"
  [ir]="compiler model artifact runtime trainer data"
  [model]="compiler ir artifact runtime trainer data"
  [artifact]="compiler ir model runtime trainer data"
  [compiler]="runtime trainer data"
  [runtime]="compiler trainer data"
)

# check_tree ROOT: prints every violation under ROOT; returns 1 if there is one.
check_tree() {
  local root=$1 bad=0 room rooms_re hits
  for room in "${!forbidden[@]}"; do
    [[ -d $root/$room ]] || continue
    rooms_re=$(tr ' ' '|' <<<"${forbidden[$room]}")
    # C++ and ODS: #include "room/..."
    hits=$(find "$root/$room" -type f \( -name '*.cc' -o -name '*.h' -o -name '*.td' -o -name '*.inc' \) \
             -exec grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]+\"($rooms_re)/" {} + || true)
    # Bazel: a label //room... outside comments.
    hits+=$'\n'$(find "$root/$room" -type f \( -name BUILD -o -name BUILD.bazel -o -name '*.bzl' \) \
             -exec grep -HnE "^[^#]*//($rooms_re)([:/\"]|$)" {} + || true)
    hits=$(sed '/^$/d' <<<"$hits")
    if [[ -n $hits ]]; then
      echo "FAIL: files under $room/ name a room it may not reach (${forbidden[$room]// /, }):"
      sed "s#^$root/#  #" <<<"$hits"
      bad=1
    fi
  done
  return $bad
}

# 1. The check can fail: a runtime file that includes the compiler, a data BUILD that
#    depends on the runtime, an ir file that includes the compiler.
planted=$(mktemp -d "${TEST_TMPDIR:-/tmp}/layering.XXXXXX")
mkdir -p "$planted/runtime/x" "$planted/data/y" "$planted/ir" "$planted/compiler/z"
printf '#include "compiler/codegen/step_compiler.h"\n' > "$planted/runtime/x/bad.cc"
printf 'cc_library(name = "y", deps = ["//runtime/params:param_store"])\n' > "$planted/data/y/BUILD"
printf '  #include "compiler/transforms/pipeline.h"\n' > "$planted/ir/bad.h"
printf '# a comment may name //runtime/device\ncc_library(name = "z", deps = ["//ir", "//model:model_config"])\n' \
  > "$planted/compiler/z/BUILD"
if out=$(check_tree "$planted"); then
  echo "FAIL: the planted violations were not found; the check cannot fail"; exit 1
fi
for want in "runtime/x/bad.cc" "data/y/BUILD" "ir/bad.h"; do
  grep -q "$want" <<<"$out" || { echo "FAIL: planted $want not reported:"; echo "$out"; exit 1; }
done
if grep -q "compiler/z/BUILD" <<<"$out"; then
  echo "FAIL: a comment or an allowed room was reported:"; echo "$out"; exit 1
fi
rm -rf "$planted"

# 2. The real tree.
anchor=${1:?usage: layering_test.sh <a file of the workspace>}
root=$(dirname "$(readlink -f "$anchor")")
[[ -d $root/runtime && -d $root/compiler ]] || { echo "FAIL: $root is not the source tree"; exit 1; }
check_tree "$root"
echo "PASS: the rooms' layering holds under $root"
