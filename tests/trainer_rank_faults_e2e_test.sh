#!/usr/bin/env bash
# A 2-rank job (`trainer --nproc_per_node=2`, the tiny demo) under faults and signals:
#   1. kill -9 of either rank ends the job within 5 s, non-zero, with the surviving rank's
#      `trainer: error: rank r of 2: ...` naming the dead one, and nothing partial written;
#   2. SIGINT or SIGTERM to the trainer, to its process group (Ctrl-C), or to either rank makes
#      both ranks stop before the same step, rank 0 save that step whole, and the job exit
#      128 + the signal. (A second Ctrl-C, which ends the job at once without saving, is
#      stop_signal_test's: this job stops and saves faster than a second signal can arrive.)
set -uo pipefail
trainer="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
export NANOCHAT_BASE_DIR="$tmp/base"
fail() { echo "FAIL: $*" >&2; pkill -9 -f -- "--output_dir=$tmp/" 2>/dev/null; exit 1; }
expect() { grep -qE -- "$1" "$2" || fail "no line matching '$1' in $2: $(tail -20 "$2")"; }
self=$(readlink -f "$trainer")

# The demo set up once, by a short 1-rank run.
"$trainer" --demo --max_iterations=2 --eval_steps=1 --eval_metrics_max_problems=4 --num_threads=1 \
  --output_dir="$tmp/setup" > "$tmp/setup.log" 2>&1 || fail "demo setup failed: $(tail "$tmp/setup.log")"

# Starts a long 2-rank job into $tmp/$1 in a session of its own (its pid is its process group)
# and waits until it has trained step 2. Sets `job`.
start_job() {
  setsid "$trainer" --demo --max_iterations=400 --eval_every=1000 --eval_steps=2 --nproc_per_node=2 \
    --output_dir="$tmp/$1" > "$tmp/$1.log" 2>&1 &
  job=$!
  for _ in $(seq 1 480); do grep -q '^Step 00002/' "$tmp/$1.log" && return; sleep 0.25; done
  fail "the $1 job never reached step 2: $(tail "$tmp/$1.log")"
}
# The pid of rank $2 of the job writing to $tmp/$1.
rank_pid() {
  for pid in $(pgrep -f -- "--output_dir=$tmp/$1\$"); do
    [[ "$(readlink -f /proc/"$pid"/exe 2>/dev/null)" == "$self" ]] || continue
    tr '\0' '\n' < /proc/"$pid"/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$pid"; return; }
  done
}
# Waits up to $2 s for the job to end; sets `rc` and `took` (seconds, 0.1 s resolution).
await_job() {
  local started=$EPOCHREALTIME
  for _ in $(seq 1 $(($2 * 10))); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$job" 2>/dev/null && fail "the $1 job was still running $2 s later: $(tail "$tmp/$1.log")"
  wait "$job"; rc=$?
  took=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  sleep 0.5
  pgrep -f -- "--output_dir=$tmp/$1\$" > /dev/null && fail "processes outlived the $1 job: $(pgrep -af -- "--output_dir=$tmp/$1\$")"
  return 0
}
no_temp_files() {
  ls -A "$tmp/$1" | grep -E 'tmp|^\.step_' && fail "a temp file was left in $tmp/$1: $(ls -A "$tmp/$1")"
  return 0
}
report=""

# 1. kill -9 of each rank.
for victim in 1 0; do
  name="killed_rank_$victim"
  start_job "$name"
  pid=$(rank_pid "$name" "$victim"); [[ -n "$pid" ]] || fail "found no rank $victim process"
  kill -9 "$pid"
  await_job "$name" 5
  [[ "$rc" != 0 ]] || fail "the job exited 0 after rank $victim was killed"
  survivor=$((1 - victim))
  expect "^trainer: error: rank $survivor of 2: .*rank $victim never reached it" "$tmp/$name.log"
  expect "mpirun noticed that process rank $victim .* exited on signal 9" "$tmp/$name.log"
  expect "^trainer: error: the job of 2 ranks ended with status $rc" "$tmp/$name.log"
  ls "$tmp/$name"/step_* 2>/dev/null && fail "a step was saved by a job that lost a rank"
  no_temp_files "$name"
  report+=" kill -9 rank $victim: ${took} s;"
done

# 2. Stop signals: to the trainer, to its process group, to each rank.
stopped_cleanly() {  # $1 name, $2 signal name, $3 expected exit status
  [[ "$rc" == "$3" ]] || fail "$1: the job exited $rc, not $3: $(tail "$tmp/$1.log")"
  expect "^\[stop\] SIG[A-Z0-9]+.*: saved step [0-9]+ to $tmp/$1/step_[0-9]+; continue the run with the same flags and --resume$" "$tmp/$1.log"
  k=$(grep -oE '^\[stop\] .*: saved step [0-9]+' "$tmp/$1.log" | awk '{print $NF}')
  for r in 0 1; do expect "^\[stop\] rank $r of 2: stopped before step $k$" "$tmp/$1.log"; done
  [[ -f "$tmp/$1/step_$(printf %06d "$k")/train_state.json" ]] || fail "$1: no step $k in $tmp/$1: $(ls -A "$tmp/$1")"
  no_temp_files "$1"
  report+=" $2: stopped before step $k, rc $rc, ${took} s;"
}
start_job to_trainer; kill -INT "$job"; await_job to_trainer 60
expect '^trainer: SIGINT: every rank finishes the step in flight, then rank 0 saves it' "$tmp/to_trainer.log"
stopped_cleanly to_trainer "SIGINT to the trainer" 130
start_job to_group; kill -TERM -- -"$job"; await_job to_group 60
stopped_cleanly to_group "SIGTERM to the process group" 143
for r in 0 1; do
  name="to_rank_$r"
  start_job "$name"; kill -INT "$(rank_pid "$name" "$r")"; await_job "$name" 60
  stopped_cleanly "$name" "SIGINT to rank $r" 130
done

echo "PASS:$report"
