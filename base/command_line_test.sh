#!/usr/bin/env bash
# base::ParseCommandLine: every help flag prints the usage (with the program's message and
# its flags) to stdout and exits 0 without running the program; flags and positional
# arguments parse as Abseil parses them; an unknown flag or a bad value still fails.
set -uo pipefail
bin="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }

for help in --help --helpfull --helpshort --helpmatch=command_line --helpon=command_line_test_main; do
  "$bin" "$help" > "$tmp/out" 2> "$tmp/err" || fail "$help exited $? (want 0): $(cat "$tmp/err")"
  grep -q "prints --value back" "$tmp/out" || fail "$help: no usage message on stdout: $(cat "$tmp/out")"
  grep -q "value=" "$tmp/out" && fail "$help ran the program: $(cat "$tmp/out")"
done
"$bin" --help > "$tmp/out" 2>&1
grep -q -- "-value" "$tmp/out" || fail "--help does not list --value: $(cat "$tmp/out")"

out=$("$bin" --value=x a b) || fail "a plain run failed"
[[ "$out" == "value=x positional=2" ]] || fail "parsed wrong: $out"
if "$bin" --bogus=1 > /dev/null 2> "$tmp/err"; then fail "--bogus accepted"; fi
grep -q "bogus" "$tmp/err" || fail "unknown flag not named: $(cat "$tmp/err")"
echo PASS
