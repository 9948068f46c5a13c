#!/usr/bin/env bash
# //data:tok_train end to end: a good run writes a loadable file and prints its stats; every
# bad input exits non-zero, names what is at fault, and leaves no output file (or leaves an
# existing one untouched).
set -uo pipefail
tok_train="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
gpl=external/english_text/GPL-3
fail() { echo "FAIL: $*" >&2; exit 1; }

# A good run: stats on stdout, the documented first line in the file.
"$tok_train" --input="$gpl" --vocab_size=1024 --output="$tmp/tok.bpe" > "$tmp/out" 2> "$tmp/err" ||
  fail "tok_train failed: $(cat "$tmp/err")"
for want in '^merges: 759 ' '^vocab_size: 1024$' '<|bos|>=1015 ' '<|output_end|>=1023$' \
            '^bytes/token on the input: ' '^longest tokens: '; do
  grep -q -- "$want" "$tmp/out" || fail "stdout lacks /$want/: $(cat "$tmp/out")"
done
[[ $(head -1 "$tmp/tok.bpe") == "gpt-sft-bpe 1" ]] || fail "the file does not start with the magic line"
[[ $(tail -1 "$tmp/tok.bpe") == "end" ]] || fail "the file does not end with 'end'"

# Running out of pairs is reported, with the shifted special ids.
printf 'ab ab ab cd cd' > "$tmp/tiny.txt"
"$tok_train" --input="$tmp/tiny.txt" --vocab_size=8192 --output="$tmp/tiny.bpe" > "$tmp/out" 2>&1 ||
  fail "tok_train on a tiny text failed: $(cat "$tmp/out")"
grep -q 'vocab_size: 269 (the text ran out of pairs before --vocab_size=8192)' "$tmp/out" ||
  fail "running out of pairs was not reported: $(cat "$tmp/out")"
grep -q '<|bos|>=260 ' "$tmp/out" || fail "special ids did not shift down: $(cat "$tmp/out")"

# Non-UTF-8 input is allowed (byte fallback) but said.
printf 'caf\xe9 \xff\xfe ok' > "$tmp/latin1.txt"
"$tok_train" --input="$tmp/latin1.txt" --vocab_size=300 --output="$tmp/latin1.bpe" > "$tmp/out" 2>&1 ||
  fail "tok_train refused non-UTF-8 input: $(cat "$tmp/out")"
grep -q "latin1.txt is not valid UTF-8 (3 bytes)" "$tmp/out" || fail "non-UTF-8 input not reported: $(cat "$tmp/out")"

# Bad input: non-zero exit, the culprit named, no output file.
expect_error() {  # <expected text in stderr> <flags...>
  local want="$1"; shift
  rm -f "$tmp/never.bpe"
  if "$tok_train" "$@" 2> "$tmp/err" > /dev/null; then fail "tok_train accepted $*"; fi
  grep -qF -- "$want" "$tmp/err" || fail "for $*: stderr lacks '$want': $(cat "$tmp/err")"
  [[ ! -e "$tmp/never.bpe" ]] || fail "a failed tok_train ($*) left an output file"
  ls "$tmp" | grep -q '\.tmp\.' && fail "a failed tok_train ($*) left a temp file"
  return 0
}
expect_error "cannot open $tmp/nope.txt" --input="$gpl,$tmp/nope.txt" --output="$tmp/never.bpe"
expect_error "$tmp is a directory" --input="$tmp" --output="$tmp/never.bpe"
expect_error "--input names no file" --input=",," --output="$tmp/never.bpe"
expect_error "--input is required" --output="$tmp/never.bpe"
expect_error "--output is required" --input="$gpl"
expect_error "--vocab_size=100 is out of range" --input="$gpl" --vocab_size=100 --output="$tmp/never.bpe"
expect_error "unexpected argument 'stray'" --input="$gpl" --output="$tmp/never.bpe" stray
expect_error "$tmp/nodir/tok.bpe" --input="$gpl" --vocab_size=300 --output="$tmp/nodir/tok.bpe"
[[ ! -e "$tmp/nodir" ]] || fail "a failed save created a directory"

# A failed run leaves an existing output untouched.
cp "$tmp/tok.bpe" "$tmp/before.bpe"
if "$tok_train" --input="$tmp/nope.txt" --output="$tmp/tok.bpe" 2> /dev/null; then fail "accepted a missing input"; fi
cmp -s "$tmp/tok.bpe" "$tmp/before.bpe" || fail "a failed run changed the existing output"
echo "tok_train: ok"
