#!/usr/bin/env bash
# Every user-facing binary answers --help with its usage on stdout and exit status 0 (the
# system Abseil alone exits 1; base/command_line.h), and runs nothing else.
set -uo pipefail
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
export NANOCHAT_BASE_DIR="$tmp/base"  # nothing may be created there
for bin in "$@"; do
  "$bin" --help > "$tmp/out" 2> "$tmp/err" || fail "$bin --help exited $? (want 0): $(cat "$tmp/err")"
  [[ -s "$tmp/out" ]] || fail "$bin --help printed no usage on stdout"
  grep -q -- "--" "$tmp/out" || fail "$bin --help lists no flag: $(cat "$tmp/out")"
done
[[ ! -e "$tmp/base" ]] || fail "a --help run created files under \$NANOCHAT_BASE_DIR: $(ls -R "$tmp/base")"
echo "PASS: $# binaries"
