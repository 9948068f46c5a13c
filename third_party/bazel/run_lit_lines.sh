#!/usr/bin/env bash
# run_lit_lines.sh: runs the `// RUN:` lines of one test file, lit-style, without lit.
# Usage: run_lit_lines.sh <test file> <tool>...
# Each tool is put on PATH under its own basename (gptc-opt, FileCheck, not), %s becomes
# the test file, a line ending in `\` continues on the next RUN line, and every line runs
# under `bash -o pipefail`. The test fails on the first line that fails, naming it.
set -euo pipefail

abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
test_file="$(abs "$1")"
shift
bin_dir="$(mktemp -d "${TEST_TMPDIR:-/tmp}/lit_bin.XXXXXX")"
for tool in "$@"; do
  ln -sf "$(abs "$tool")" "$bin_dir/$(basename "$tool")"
done
export PATH="$bin_dir:$PATH"

lines=()
pending=""
while IFS= read -r raw; do
  [[ "$raw" =~ ^[[:space:]]*//[[:space:]]*RUN:(.*)$ ]] || continue
  body="${BASH_REMATCH[1]}"
  if [[ "$body" =~ ^(.*)\\[[:space:]]*$ ]]; then
    pending+="${BASH_REMATCH[1]} "
    continue
  fi
  lines+=("$pending$body")
  pending=""
done < "$test_file"

if ((${#lines[@]} == 0)); then
  echo "run_lit_lines: $test_file has no '// RUN:' line" >&2
  exit 1
fi

for line in "${lines[@]}"; do
  cmd="${line//%s/$test_file}"
  echo "RUN: $cmd"
  if ! bash -o pipefail -c "$cmd"; then
    echo "run_lit_lines: FAILED in $test_file: $line" >&2
    exit 1
  fi
done
