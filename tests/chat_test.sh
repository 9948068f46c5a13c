#!/usr/bin/env bash
# End to end over //trainer:chat and //trainer/generation:spelling_eval: a tokenizer from
# //data:tok_train and a random checkpoint from //trainer/eval:random_checkpoint; chat --prompt
# prints one reply line and exits 0, the same seed gives the same reply, stdin gives one
# reply per non-empty line, in one conversation ('clear' and 'quit' as nanochat's chat_cli);
# the tokenizer is found beside the checkpoint; --help exits 0; spelling_eval prints one accuracy line per task; bad flags and
# missing files exit non-zero and name the flag or file.
set -uo pipefail
tok_train="$1"; random_checkpoint="$2"; chat="$3"; spelling_eval="$4"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$tok_train" --input=external/english_text/GPL-3 --vocab_size=512 --output="$tmp/tok.txt" > "$tmp/tok.log" 2>&1 \
  || fail "tok_train failed: $(cat "$tmp/tok.log")"
vocab=$(sed -n 's/^vocab_size: \([0-9]*\).*/\1/p' "$tmp/tok.log")
[[ -n "$vocab" ]] || fail "no vocab_size in tok_train's output: $(cat "$tmp/tok.log")"
"$random_checkpoint" --output_dir="$tmp/ckpt" --vocab_size="$vocab" --step=7 --zero_output_projections=false > "$tmp/ckpt.log" 2>&1 \
  || fail "random_checkpoint failed: $(cat "$tmp/ckpt.log")"

args=(--checkpoint_dir="$tmp/ckpt" --tokenizer="$tmp/tok.txt" --max_tokens=12 --num_threads=2)

# One prompt: exit 0, exactly one reply line, the speed on stderr.
"$chat" "${args[@]}" --prompt="Hello, who are you?" > "$tmp/out1" 2> "$tmp/err1" || fail "chat failed: $(cat "$tmp/err1")"
[[ $(wc -l < "$tmp/out1") -eq 1 ]] || fail "expected one reply line, got: $(cat "$tmp/out1")"
grep -q 'reply tokens' "$tmp/err1" || fail "no speed line on stderr: $(cat "$tmp/err1")"
# A random model's greedy reply is not empty (it would have to pick a stop token first).
"$chat" "${args[@]}" --prompt="Hello, who are you?" --temperature=0 > "$tmp/greedy" 2> "$tmp/err" \
  || fail "greedy chat failed: $(cat "$tmp/err")"
[[ -n "$(cat "$tmp/greedy")" ]] || fail "empty greedy reply"

# Same seed, same reply; explicit --step.
"$chat" "${args[@]}" --step=7 --prompt="Hello, who are you?" > "$tmp/out2" 2> "$tmp/err2" || fail "chat --step=7 failed: $(cat "$tmp/err2")"
cmp -s "$tmp/out1" "$tmp/out2" || fail "same seed, different replies: $(cat "$tmp/out1") vs $(cat "$tmp/out2")"

# stdin: one reply per line that holds more than blanks (a '\r' before the newline is dropped);
# chat names the step it loaded.
printf 'first prompt\r\n\n   \t \nsecond prompt\n' | "$chat" "${args[@]}" --temperature=0 > "$tmp/out3" 2> "$tmp/err3" \
  || fail "chat on stdin failed: $(cat "$tmp/err3")"
[[ $(grep -c 'reply tokens' "$tmp/err3") -eq 2 ]] || fail "expected two replies for two stdin lines: $(cat "$tmp/err3")"
grep -q "^\[chat\] step 7 of $tmp/ckpt (" "$tmp/err3" || fail "chat does not name the step it loaded: $(head -3 "$tmp/err3")"
# A turn too long for the model is refused, and the conversation goes on (it used to end, rc 2).
long=$(head -c 400000 /dev/zero | tr '\0' 'a' | sed 's/aaaaa/abc d/g')
printf 'hi\n%s\nagain\n' "$long" | "$chat" "${args[@]}" --temperature=0 > "$tmp/out4" 2> "$tmp/err4" \
  || fail "chat ended on an over-long turn: $(tail -3 "$tmp/err4")"
grep -q '^\[not sent: .*would hold [0-9]* positions.*shorten the turn' "$tmp/err4" || fail "no refusal of the long turn: $(tail -3 "$tmp/err4")"
[[ $(grep -c 'reply tokens' "$tmp/err4") -eq 2 ]] || fail "expected replies to the two short turns: $(cat "$tmp/err4" | cut -c1-200)"

# A conversation: the second turn's prompt holds the first turn and its reply; 'clear'
# starts anew (the third prompt is as short as the first); 'quit' ends before the last line.
printf 'hello\nand then\nclear\nhello\nquit\nnever answered\n' | "$chat" "${args[@]}" --temperature=0 \
  > "$tmp/conv.out" 2> "$tmp/conv.err" || fail "a conversation failed: $(cat "$tmp/conv.err")"
mapfile -t prompt_tokens < <(sed -n 's/^\[\([0-9]*\) prompt tokens.*/\1/p' "$tmp/conv.err")
mapfile -t reply_tokens < <(sed -n 's/.*; \([0-9]*\) reply tokens.*/\1/p' "$tmp/conv.err")
[[ ${#prompt_tokens[@]} -eq 3 ]] || fail "expected 3 replies (quit ends the chat): $(cat "$tmp/conv.err")"
(( prompt_tokens[1] > prompt_tokens[0] + reply_tokens[0] )) \
  || fail "the second turn does not see the first: ${prompt_tokens[*]} prompt tokens, ${reply_tokens[*]} reply tokens"
[[ ${prompt_tokens[2]} -eq ${prompt_tokens[0]} ]] || fail "'clear' did not start anew: ${prompt_tokens[*]}"
[[ $(wc -l < "$tmp/conv.out") -eq 3 ]] || fail "a pipe's stdout should hold the 3 replies only: $(cat "$tmp/conv.out")"
"$chat" "${args[@]}" --temperature=0 --prompt=hello > "$tmp/hello.out" 2> "$tmp/err" || fail "chat --prompt=hello failed"
[[ "$(head -1 "$tmp/conv.out")" == "$(cat "$tmp/hello.out")" ]] \
  || fail "the first greedy turn differs from the same prompt alone: $(head -1 "$tmp/conv.out") vs $(cat "$tmp/hello.out")"

# From a fresh shell: no --tokenizer and another base dir, the tokenizer beside the checkpoint
# (where the trainer keeps a copy in its run directory) is found.
cp -r "$tmp/ckpt" "$tmp/run" && cp "$tmp/tok.txt" "$tmp/run/tokenizer.txt"
NANOCHAT_BASE_DIR="$tmp/elsewhere" "$chat" --checkpoint_dir="$tmp/run" --max_tokens=4 --prompt=hi > /dev/null \
  2> "$tmp/fresh.err" || fail "chat without --tokenizer did not find $tmp/run/tokenizer.txt: $(cat "$tmp/fresh.err")"
if NANOCHAT_BASE_DIR="$tmp/elsewhere" "$chat" --checkpoint_dir="$tmp/ckpt" --prompt=hi > /dev/null 2> "$tmp/bad.err"; then
  fail "chat found a tokenizer where there is none"
fi
grep -qF -- "--tokenizer" "$tmp/bad.err" && grep -qF "$tmp/ckpt/tokenizer.txt" "$tmp/bad.err" \
  || fail "the missing tokenizer's error does not name the places tried and the flag: $(cat "$tmp/bad.err")"

# --help is a success.
"$chat" --help > "$tmp/help.out" 2>&1 || fail "chat --help exited non-zero"
grep -q -- "--checkpoint_dir" "$tmp/help.out" || fail "chat --help does not list its flags"

# Bad flags and files: non-zero exit, the flag or file named.
expect_error() {  # expect_error <text the error must contain> <chat flags...>
  local want="$1"; shift
  if "$chat" "$@" > /dev/null 2> "$tmp/bad.err"; then fail "chat $* succeeded"; fi
  grep -qF -- "$want" "$tmp/bad.err" || fail "chat $*: error does not name '$want': $(cat "$tmp/bad.err")"
}
expect_error "--temperature" "${args[@]}" --prompt=hi --temperature=-1
expect_error "--top_k" "${args[@]}" --prompt=hi --top_k=-3
expect_error "--max_tokens" "${args[@]}" --prompt=hi --max_tokens=0
expect_error "$tmp/nope" --checkpoint_dir="$tmp/nope" --tokenizer="$tmp/tok.txt" --prompt=hi
expect_error "--step=99" "${args[@]}" --step=99 --prompt=hi
expect_error "$tmp/missing.txt" --checkpoint_dir="$tmp/ckpt" --tokenizer="$tmp/missing.txt" --prompt=hi
expect_error "bogus" "${args[@]}" --bogus=1
# The generative eval on the spelling tasks: one line per task, 2 problems each.
"$spelling_eval" --checkpoint_dir="$tmp/ckpt" --tokenizer="$tmp/tok.txt" --words=external/wordlist/words \
  --max_problems=2 --max_tokens=8 --num_threads=2 > "$tmp/eval.out" 2> "$tmp/eval.err" \
  || fail "spelling_eval failed: $(cat "$tmp/eval.err")"
grep -q '^SimpleSpelling: [0-2]/2 = ' "$tmp/eval.out" || fail "no SimpleSpelling line: $(cat "$tmp/eval.out")"
grep -q '^SpellingBee: [0-2]/2 = ' "$tmp/eval.out" || fail "no SpellingBee line: $(cat "$tmp/eval.out")"
if "$spelling_eval" --checkpoint_dir="$tmp/ckpt" --tokenizer="$tmp/tok.txt" --words=external/wordlist/words \
     --tasks=Nope > /dev/null 2> "$tmp/bad.err"; then fail "spelling_eval accepted --tasks=Nope"; fi
grep -q -- "--tasks: unknown task 'Nope'" "$tmp/bad.err" || fail "bad --tasks not named: $(cat "$tmp/bad.err")"
if "$spelling_eval" --checkpoint_dir="$tmp/ckpt" --tokenizer="$tmp/tok.txt" --words="$tmp/nowords" \
     > /dev/null 2> "$tmp/bad.err"; then fail "spelling_eval accepted a missing --words file"; fi
grep -q -- "--words: .*nowords" "$tmp/bad.err" || fail "missing --words not named: $(cat "$tmp/bad.err")"
echo "PASS"
