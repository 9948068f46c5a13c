#!/usr/bin/env bash
# End to end over //trainer's run directory on a tiny model (depth 1, vocabulary 600, [2, 128]
# micro-batches): checkpoints during the run and exact resume, stop signals, the lock, and every
# bad input a clear error that loses nothing.
#   1. --save_every + --resume after a stop at step 3 reproduces the uninterrupted run's losses
#      and final weights bit for bit, eager and compiled (cpu); a resume without the optimizer
#      state or at the wrong data position does not (so the comparison can fail); kill -9 at
#      random instants of a run saving every step, then --resume: the same losses;
#   2. SIGINT mid-run: the step finishes, a step is saved, exit 130; resumed, the run's losses
#      equal the uninterrupted run's; SIGTERM: 143; a second SIGINT exits at once;
#   3. a second run into a locked directory is refused, naming the holder's pid and host;
#   4. bad inputs: --save_every < 0, an output dir that is a file or cannot be made, a base dir
#      that is a file, --resume with nothing to resume or with a changed shape, a full disk while
#      appending metrics.jsonl.
set -uo pipefail
trainer="$1"; setup="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
base="$tmp/base"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -qE -- "$1" "$2" || fail "no line matching '$1' in $2: $(tail -20 "$2")"; }
"$setup" --base_dir="$base" --depth=1 --vocab_size=600 > "$tmp/setup.log" 2>&1 || fail "setup: $(cat "$tmp/setup.log")"
tiny=(--base_dir="$base" --max_seq_len=128 --device_batch_size=2 --target_examples_per_step=4 --eval_every=4
      --eval_steps=1 --eval_metrics_every=1000 --eval_metrics_max_problems=2 --num_threads=2)
# "step loss loss_mean" per metrics record: the losses exactly as written (17 significant digits).
losses() { sed -E 's/.*"step":([0-9]+),.*"loss":([^,]+),"loss_mean":([^,]+),.*/\1 \2 \3/' "$1/metrics.jsonl"; }
checksum() { grep -oE '"param_checksum": "[0-9a-f]+"' "$1/meta_"*.json; }
train() {  # log, then the trainer's flags
  local log="$1"; shift
  "$trainer" "${tiny[@]}" "$@" > "$log" 2>&1 || fail "run failed ($*): $(tail -20 "$log")"
}

# 1. Exact resume after a stop at step 3 (the later steps removed, as if the run had died after
# saving step 3; metrics.jsonl still holds the later records and is cut back).
for compile in false true; do
  full="$tmp/full_$compile"; run="$tmp/resumed_$compile"
  train "$tmp/full.log" --max_iterations=9 --compile=$compile --output_dir="$full"
  train "$tmp/first.log" --max_iterations=9 --compile=$compile --output_dir="$run" --save_every=3
  for s in 3 6 8; do [[ -f "$run/step_00000$s/optim_00000$s.safetensors" ]] || fail "no step $s: $(ls -R "$run")"; done
  [[ -f "$run/step_000003/train_state.json" ]] || fail "step 3 has no train_state.json"
  rm -rf "$run/step_000006" "$run/step_000008"
  [[ $compile == false ]] && cp -a "$run" "$tmp/no_optimizer" && cp -a "$run" "$tmp/wrong_data"
  train "$tmp/resume.log" --max_iterations=9 --compile=$compile --output_dir="$run" --save_every=3 --resume
  expect "^\[resume\] continuing the run from $run/step_000003$" "$tmp/resume.log"
  expect '^\[resume\] step 3: skipped the 6 micro-batches each rank had trained on in [0-9.]+ s$' "$tmp/resume.log"
  grep -q '^Step 00002/' "$tmp/resume.log" && fail "the resumed run trained step 2 again"
  expect '^Step 00003/00009 \| Training loss' "$tmp/resume.log"
  [[ "$(losses "$full" | awk '{print $1}' | tr '\n' ' ')" == "0 1 2 3 4 5 6 7 " ]] || fail "full run's steps: $(losses "$full")"
  [[ "$(losses "$run")" == "$(losses "$full")" ]] \
    || fail "compile=$compile: resumed losses differ from the uninterrupted run's:\n$(diff <(losses "$full") <(losses "$run"))"
  [[ "$(checksum "$run/step_000008")" == "$(checksum "$full/step_000008")" ]] \
    || fail "compile=$compile: the resumed run's final weights differ"
  echo "compile=$compile: resumed at step 3, losses of steps 0-7 and the final weights bit-identical"
done
# Every file of a step is checked on load: the optimizer's state with its last tensors zeroed, or
# train_state.json edited to two micro-batches off, is refused naming the file, and the run
# directory is left as it was but for its lock (before the checksums such a step resumed into
# other losses).
opt="$tmp/no_optimizer/step_000003/optim_000003.safetensors"
dd if=/dev/zero of="$opt" bs=4096 count=1 seek=$(( $(stat -c %s "$opt") / 4096 - 1 )) conv=notrunc 2> /dev/null
sed -i -E 's/"micro_batches_per_rank": 6/"micro_batches_per_rank": 8/' "$tmp/wrong_data/step_000003/train_state.json"
for control in no_optimizer wrong_data; do
  before="$(cd "$tmp/$control" && find . -type f ! -name .lock | sort | xargs sha256sum)"
  "$trainer" "${tiny[@]}" --max_iterations=9 --compile=false --output_dir="$tmp/$control" --resume \
    > "$tmp/control.log" 2>&1 && fail "$control: resumed from a corrupt step"
  case $control in
    no_optimizer) expect "trainer: error: .*/step_000003/optim_000003.safetensors: '[^']+' does not match its checksum" "$tmp/control.log" ;;
    wrong_data) expect 'trainer: error: .*/step_000003/train_state.json: does not match its checksum' "$tmp/control.log" ;;
  esac
  after="$(cd "$tmp/$control" && find . -type f ! -name .lock | sort | xargs sha256sum)"
  [[ "$after" == "$before" ]] || fail "$control: the refused resume changed the run directory: $(diff <(echo "$before") <(echo "$after"))"
done

# 1a. No training into NaN: learning rates of 1e30 overflow the tiny model within a few steps.
# Saving no step: the first step whose loss is not finite stops the run before its update, the
# error names it. Saving every step: the first save after the overflow is refused naming the
# tensor, and the step before it stays the newest. Nothing non-finite is ever written.
huge=(--matrix_lr=1e30 --embedding_lr=1e30 --unembedding_lr=1e30 --compile=false --max_iterations=8)
for case in loss save; do
  dir="$tmp/nan_$case"
  if [[ $case == loss ]]; then flags=(); else flags=(--save_every=1); fi
  "$trainer" "${tiny[@]}" "${huge[@]}" "${flags[@]}" --output_dir="$dir" > "$tmp/nan.log" 2>&1 && fail "$case: trained into NaN with rc 0"
  case $case in
    loss)
      expect "^trainer: error: step [0-9]: the training loss is not finite \(this rank's micro-batch [01] of 2 gave (nan|inf|-inf)\); the step's update was not applied and nothing of it saved. No step of this run was saved" "$tmp/nan.log"
      ls "$dir" | grep -q '^step_' && fail "loss: a step was saved: $(ls "$dir")" ;;
    save)
      expect "^trainer: error: step [0-9]: (parameter|optimizer state) [^ ]+ holds a non-finite value \(element [0-9]+ is (nan|inf|-inf)\) after the update; the step is not saved. The newest saved step, .*/step_00000[0-9], is the run's last good state" "$tmp/nan.log"
      bad=$(grep -oE '^trainer: error: step [0-9]' "$tmp/nan.log" | grep -oE '[0-9]$')
      newest=$(ls "$dir" | grep '^step_' | sort | tail -1)
      [[ "$newest" == "step_00000$((bad - 1))" ]] || fail "save: refused step $bad, newest saved $newest"
      grep -q "/$newest, is the run's last good state" "$tmp/nan.log" || fail "save: the error does not name $newest" ;;
  esac
done

# 1b. --resume of a finished run says so and changes nothing (it used to rewrite run_summary.json
# with 0 steps and zero losses).
before="$(cd "$tmp/full_false" && find . -type f ! -name .lock | sort | xargs sha256sum)"
"$trainer" "${tiny[@]}" --compile=false --max_iterations=9 --output_dir="$tmp/full_false" --resume > "$tmp/finished.log" 2>&1 \
  && fail "--resume of a finished run succeeded"
expect "^trainer: error: --resume: the run in $tmp/full_false is finished: $tmp/full_false/step_000008 is its last step \(9 iterations" "$tmp/finished.log"
[[ "$(cd "$tmp/full_false" && find . -type f ! -name .lock | sort | xargs sha256sum)" == "$before" ]] || fail "--resume of a finished run changed its files"

# 1c. A directory belongs to one run: a fresh start (no --resume) where another run saved
# steps is refused before anything is written, naming that run and the ways out; --overwrite
# moves that run's files aside (nothing deleted) and metrics.jsonl then holds one run alone.
cp -a "$tmp/full_false" "$tmp/taken"
before="$(cd "$tmp/taken" && find . -type f ! -name .lock | sort | xargs sha256sum)"
"$trainer" "${tiny[@]}" --compile=false --max_iterations=4 --output_dir="$tmp/taken" > "$tmp/taken.log" 2>&1 \
  && fail "a fresh run started in a directory that holds another run"
expect "^trainer: error: --output_dir=$tmp/taken holds another run \(run [0-9]+, saved up to step 8, 8 metrics record\(s\)\)\. Continue it with --resume, or start this run in a new --output_dir; --overwrite" "$tmp/taken.log"
[[ "$(cd "$tmp/taken" && find . -type f ! -name .lock | sort | xargs sha256sum)" == "$before" ]] || fail "the refused start changed the directory"
train "$tmp/taken.log" --compile=false --max_iterations=4 --output_dir="$tmp/taken" --overwrite
expect "^\[run dir\] --overwrite: moved the earlier run \(run [0-9]+, saved up to step 8, 8 metrics record\(s\)\) to $tmp/taken.replaced.1$" "$tmp/taken.log"
[[ "$(cd "$tmp/taken.replaced.1" && find . -type f ! -name .lock | sort | xargs sha256sum)" == "$before" ]] || fail "--overwrite: the earlier run was not moved whole"
[[ "$(grep -oE '"run":[0-9]+' "$tmp/taken/metrics.jsonl" | sort -u | wc -l)" == 1 ]] || fail "--overwrite: metrics.jsonl mixes runs"
[[ "$(wc -l < "$tmp/taken/metrics.jsonl")" == 3 ]] || fail "--overwrite: $(wc -l < "$tmp/taken/metrics.jsonl") records, not 3"

# 1d. kill -9 at a random instant of a run that saves every step (most of its time is spent
# saving), then --resume: every trial ends with the uninterrupted run's losses.
train "$tmp/k_full.log" --max_iterations=120 --compile=false --output_dir="$tmp/k_full"
cleaned=0
for trial in 1 2 3 4; do
  dir="$tmp/killed_$trial"
  "$trainer" "${tiny[@]}" --compile=false --max_iterations=120 --save_every=1 --output_dir="$dir" > "$tmp/killed.log" 2>&1 &
  pid=$!
  # A random step of the run, then a random instant in the next few steps (each one mostly a save).
  at=$(printf 'Step %05d/' $(( RANDOM % 90 + 5 )))
  for _ in $(seq 1 2000); do grep -q "^$at" "$tmp/killed.log" 2> /dev/null && break; sleep 0.005; done
  sleep "0.0$(( RANDOM % 10 ))"
  kill -9 "$pid" 2> /dev/null; wait "$pid" 2> /dev/null
  echo "trial $trial: killed after $(ls -d "$dir"/step_* 2> /dev/null | wc -l) saved steps" \
    "$(ls -A "$dir" | grep -q '\.tmp\.' && echo '(in a save)')"
  resume=(--resume)
  ls -d "$dir"/step_* > /dev/null 2>&1 || resume=()  # killed before its first save
  train "$tmp/after_kill.log" --compile=false --max_iterations=120 --save_every=1 --output_dir="$dir" "${resume[@]}"
  grep -q 'left by a process that is gone' "$tmp/after_kill.log" && cleaned=$((cleaned + 1))
  [[ "$(losses "$dir")" == "$(losses "$tmp/k_full")" ]] || fail "trial $trial: losses after kill -9 and ${resume[*]:-a fresh start} differ"
  ls -A "$dir" | grep -q 'tmp' && fail "trial $trial: a temp entry was left: $(ls -A "$dir")"
done
echo "kill -9 at random instants: 4 trials resumed to the uninterrupted losses; $cleaned found a dead save to remove"

# 2. Stop signals. A longer run, stopped after step 2 appears.
start_run() {  # dir, log, extra flags: starts the trainer in the background; $pid is it
  local dir="$1" log="$2"; shift 2
  "$trainer" "${tiny[@]}" --compile=false --output_dir="$dir" "$@" > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 1000); do grep -q '^Step 00002/' "$log" 2> /dev/null && return; sleep 0.01; done
  kill -9 "$pid"; fail "the run never reached step 2: $(tail "$log")"
}
train "$tmp/sig_full.log" --max_iterations=60 --compile=false --output_dir="$tmp/sig_full"
start_run "$tmp/sig" "$tmp/sig.log" --max_iterations=60
kill -INT "$pid"; wait "$pid"; rc=$?
[[ $rc == 130 ]] || fail "SIGINT: exit $rc, not 130: $(tail "$tmp/sig.log")"
expect '^trainer: SIGINT: finishing the step in flight, then saving a checkpoint' "$tmp/sig.log"
expect "^\[stop\] SIGINT: saved step [0-9]+ to $tmp/sig/step_0000[0-9]+; continue the run with the same flags and --resume$" "$tmp/sig.log"
k=$(grep -oE '^\[stop\] SIGINT: saved step [0-9]+' "$tmp/sig.log" | awk '{print $NF}')
(( k >= 3 && k < 59 )) || fail "stopped at step $k"
[[ $(losses "$tmp/sig" | wc -l) == "$k" ]] || fail "metrics.jsonl has $(losses "$tmp/sig" | wc -l) records, not $k"
train "$tmp/sig_resume.log" --max_iterations=60 --compile=false --output_dir="$tmp/sig" --resume
[[ "$(losses "$tmp/sig")" == "$(losses "$tmp/sig_full")" ]] || fail "after SIGINT at step $k, resumed losses differ"
echo "SIGINT at step $k: exit 130, resumed, losses of all 59 steps bit-identical"

start_run "$tmp/term" "$tmp/term.log" --max_iterations=60
kill -TERM "$pid"; wait "$pid"; rc=$?
[[ $rc == 143 ]] || fail "SIGTERM: exit $rc, not 143: $(tail "$tmp/term.log")"
expect '^\[stop\] SIGTERM: saved step' "$tmp/term.log"

# Slower steps (16 micro-batches each), so that the second SIGINT, sent once the first one's
# line is out, lands within the step in flight or the save (two signals sent back to back
# would merge into one pending signal).
start_run "$tmp/twice" "$tmp/twice.log" --max_iterations=60 --target_examples_per_step=32
kill -INT "$pid"
for _ in $(seq 1 500); do grep -q '^trainer: SIGINT' "$tmp/twice.log" 2> /dev/null && break; sleep 0.002; done
kill -INT "$pid"; wait "$pid"; rc=$?
[[ $rc == 130 ]] || fail "two SIGINTs: exit $rc, not 130"
expect '^trainer: a second stop signal: exiting now, without saving$' "$tmp/twice.log"
grep -q '^\[stop\]' "$tmp/twice.log" && fail "a second SIGINT still saved"

# 3. The lock: a second run into a directory in use is refused, naming the holder.
start_run "$tmp/locked" "$tmp/locked.log" --max_iterations=100000
if "$trainer" "${tiny[@]}" --compile=false --max_iterations=3 --output_dir="$tmp/locked" > "$tmp/second.log" 2>&1; then
  kill -9 "$pid"; fail "a second run into a locked directory was accepted"
fi
grep -qF "trainer: error: --output_dir=$tmp/locked is in use by another run: pid $pid on host $(hostname)" "$tmp/second.log" \
  || { kill -9 "$pid"; fail "the refusal does not name pid $pid: $(cat "$tmp/second.log")"; }
kill -TERM "$pid"; wait "$pid"
[[ $? == 143 ]] || fail "the holder did not stop on SIGTERM"

# 4. Bad inputs: the culprit named, nothing created or lost.
bad() {  # rc, expected text, then flags
  local want_rc="$1" want="$2"; shift 2
  "$trainer" "${tiny[@]}" --compile=false --max_iterations=3 "$@" > "$tmp/bad.log" 2>&1
  local rc=$?
  [[ $rc == "$want_rc" ]] || fail "exit $rc, not $want_rc, for: $* ($(cat "$tmp/bad.log"))"
  grep -qF -- "$want" "$tmp/bad.log" || fail "error for '$*' does not say '$want': $(cat "$tmp/bad.log")"
  grep -q 'terminate called\|what():' "$tmp/bad.log" && fail "an uncaught exception: $(cat "$tmp/bad.log")"
  return 0
}
bad 2 "--save_every=-1 must be >= 0" --save_every=-1 --output_dir="$tmp/never"
[[ ! -e "$tmp/never" ]] || fail "a bad flag created the output dir"
echo keep > "$tmp/afile"
bad 1 "--output_dir=$tmp/afile is a file, not a directory" --output_dir="$tmp/afile"
bad 1 "--output_dir=$tmp/afile/run: cannot create the run directory" --output_dir="$tmp/afile/run"
[[ "$(cat "$tmp/afile")" == keep ]] || fail "the file given as --output_dir changed"
bad 1 "--output_dir=/proc/gpt_sft_run: cannot create the run directory" --output_dir=/proc/gpt_sft_run
bad 1 "--base_dir=$tmp/afile: no usable tokenizer" --base_dir="$tmp/afile" --output_dir="$tmp/never"
[[ ! -e "$tmp/never" ]] || fail "a bad base dir created the output dir"
mkdir -p "$tmp/filebase"  # a base dir whose chatsft_checkpoints is a file
cp -a "$base/tokenizer" "$base/base_checkpoints" "$tmp/filebase/" && echo keep > "$tmp/filebase/chatsft_checkpoints"
bad 1 "--base_dir=$tmp/filebase: the run directory $tmp/filebase/chatsft_checkpoints/d1: cannot create the run directory" \
  --base_dir="$tmp/filebase"
[[ "$(cat "$tmp/filebase/chatsft_checkpoints")" == keep && ! -e "$tmp/filebase/compile_cache" ]] \
  || fail "a bad run directory under --base_dir changed or created files"
mkdir -p "$tmp/empty_run"
bad 1 "--resume: $tmp/empty_run has no step to resume from" --output_dir="$tmp/empty_run" --resume
before=$(cd "$tmp/sig" && find . -type f ! -name .lock -exec md5sum {} + | sort)
bad 1 "--resume: $tmp/sig/step_000059 was trained with --max_seq_len=128; this run has --max_seq_len=64" \
  --max_iterations=60 --output_dir="$tmp/sig" --resume --max_seq_len=64
bad 1 "was trained with --matrix_lr=0.02" --max_iterations=60 --output_dir="$tmp/sig" --resume --matrix_lr=0.01
bad 1 "was trained with num_iterations=60; this run has num_iterations=61 (set by --max_iterations" --max_iterations=61 --output_dir="$tmp/sig" --resume
"$setup" --base_dir="$base" --depth=2 --vocab_size=600 > "$tmp/setup2.log" 2>&1 || fail "setup d2: $(cat "$tmp/setup2.log")"
bad 1 'was trained with model_config={"sequence_len":' --max_iterations=60 --output_dir="$tmp/sig" --resume --model_tag=d2
grep -qF '"n_layer":1' "$tmp/bad.log" && grep -qF '"n_layer":2' "$tmp/bad.log" || fail "the model refusal lacks a depth: $(cat "$tmp/bad.log")"
[[ "$(cd "$tmp/sig" && find . -type f ! -name .lock -exec md5sum {} + | sort)" == "$before" ]] \
  || fail "a refused resume changed the run directory"
# A full disk while appending metrics: a 4 KiB file-size limit lets ~9 records in.
( ulimit -f 4; "$trainer" "${tiny[@]}" --compile=false --max_iterations=30 --output_dir="$tmp/full_disk" \
    > "$tmp/disk.log" 2>&1 ); rc=$?
[[ $rc == 1 ]] || fail "a full disk: exit $rc: $(tail "$tmp/disk.log")"
expect "^trainer: error: cannot append to the metrics file $tmp/full_disk/metrics.jsonl: File too large \(the file keeps its whole records\)$" "$tmp/disk.log"
[[ -s "$tmp/full_disk/metrics.jsonl" && "$(tail -c 1 "$tmp/full_disk/metrics.jsonl" | od -An -c | tr -d ' ')" == '\n' ]] \
  || fail "metrics.jsonl does not end with a whole line"
[[ $(grep -vc '^{"run":.*"peak_rss_bytes":[0-9]*}$' "$tmp/full_disk/metrics.jsonl") == 0 ]] || fail "a torn line in metrics.jsonl"
echo "PASS"
