#!/usr/bin/env bash
# Checks run_lit_lines.sh itself: a passing file with a continued RUN line passes, %s is
# substituted, and a failing RUN line fails the run.
set -euo pipefail
runner="$1"
dir="$(mktemp -d "${TEST_TMPDIR:-/tmp}/runner.XXXXXX")"

printf '%s\n' '// RUN: grep -q "marker-123" %s \' '// RUN:   && test -f %s' '// marker-123' > "$dir/pass.mlir"
"$runner" "$dir/pass.mlir" > "$dir/pass.log" || { echo "passing file failed"; cat "$dir/pass.log"; exit 1; }
grep -q "RUN:  grep -q \"marker-123\" $dir/pass.mlir" "$dir/pass.log" || { echo "no %s substitution"; exit 1; }

printf '%s\n' '// RUN: true' '// RUN: false' > "$dir/fail.mlir"
if "$runner" "$dir/fail.mlir" > "$dir/fail.log" 2>&1; then echo "failing RUN line passed"; exit 1; fi
grep -q "FAILED in" "$dir/fail.log" || { echo "failure not named"; exit 1; }

printf '%s\n' '// no run line' > "$dir/none.mlir"
if "$runner" "$dir/none.mlir" > /dev/null 2>&1; then echo "file without RUN passed"; exit 1; fi
echo PASS
