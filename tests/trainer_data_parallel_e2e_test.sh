#!/usr/bin/env bash
# End to end over `trainer --nproc_per_node=2` on the tiny demo config: the trainer relaunches
# itself as 2 MPI ranks, only rank 0 prints the step lines and writes the checkpoint, the run's
# validation loss matches the 1-rank run's over the same global batch, a flag that disagrees
# with mpirun's world is an error naming both; --device=cuda ranks take NCCL, one GPU each
# (here, without a GPU: the rank and the reason). Dead ranks and stop signals:
# trainer_rank_faults_e2e_test.
set -uo pipefail
trainer="$1"; run_ranks="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
export NANOCHAT_BASE_DIR="$tmp/base"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -qE -- "$1" "$2" || fail "no line matching '$1' in $2: $(tail -20 "$2")"; }
common=(--demo --max_iterations=6 --eval_every=3 --eval_steps=2 --eval_metrics_max_problems=16)

# 1. One rank (sets the demo up), then two.
"$trainer" "${common[@]}" --num_threads=1 --output_dir="$tmp/one" > "$tmp/one.log" 2>&1 \
  || fail "1-rank run failed: $(tail -20 "$tmp/one.log")"
"$trainer" "${common[@]}" --nproc_per_node=2 --output_dir="$tmp/two" > "$tmp/two.log" 2>&1 \
  || fail "2-rank run failed: $(tail -20 "$tmp/two.log")"
log="$tmp/two.log"
expect '^\[ranks\] starting 2 ranks on this machine through mpirun$' "$log"
expect '^\[ranks\] 2 data-parallel ranks \(mpi\), 1 thread\(s\) each$' "$log"
expect '^\[VALIDATION\] ✓ Model is compiled .*gradients averaged over 2 ranks in the step\)$' "$log"
expect '^=> Setting grad accum steps: 2$' "$log"
expect '^\[VALIDATION\] ✓ Checkpoint reloaded bit-exactly' "$log"
expect '^\[VALIDATION\] Summary: compiled \(device cpu\) on 2 ranks \| .*recompilations 0 \(training\)' "$log"
for s in 0 1 2 3 4; do
  n=$(grep -c "^Step 0000$s/00006 | Training loss" "$log")
  [[ "$n" == 1 ]] || fail "step $s logged $n times (only rank 0 logs)"
done
[[ -f "$tmp/two/step_000005/model_000005.safetensors" && -f "$tmp/two/run_summary.json" ]] || fail "no checkpoint/summary: $(ls "$tmp/two")"
grep -q '"world_size": 2' "$tmp/two/run_summary.json" || fail "summary is not a 2-rank run"
[[ $(wc -l < "$tmp/two/metrics.jsonl") == 5 ]] || fail "metrics.jsonl should have 5 records (rank 0 only)"
val() { grep -oE '^Step 00005 \| Validation loss: [0-9.]+' "$1" | awk '{print $NF}'; }
one=$(val "$tmp/one.log"); two=$(val "$tmp/two.log")
awk -v a="$one" -v b="$two" 'BEGIN { d = (a - b) / a; if (d < 0) d = -d; exit !(a > 0 && d < 0.03) }' \
  || fail "2-rank validation loss $two is not within 3% of the 1-rank run's $one"

# 1b. Exact resume on 2 ranks: saved every 2 steps, stopped after step 2's save (the later steps
# removed, as if the job had died), resumed: the losses and final weights equal the
# uninterrupted 2-rank run's bit for bit (rank 0 saves the optimizer state, the same on every
# rank; each rank skips its own micro-batches).
"$trainer" "${common[@]}" --nproc_per_node=2 --output_dir="$tmp/two_saved" --save_every=2 > "$tmp/saved.log" 2>&1 \
  || fail "2-rank --save_every run failed: $(tail -20 "$tmp/saved.log")"
rm -rf "$tmp/two_saved/step_000004" "$tmp/two_saved/step_000005"
"$trainer" "${common[@]}" --nproc_per_node=2 --output_dir="$tmp/two_saved" --save_every=2 --resume > "$tmp/resumed.log" 2>&1 \
  || fail "2-rank --resume failed: $(tail -20 "$tmp/resumed.log")"
expect '^\[resume\] step 2: skipped the 4 micro-batches each rank had trained on' "$tmp/resumed.log"
losses() { sed -E 's/.*"step":([0-9]+),.*"loss":([^,]+),"loss_mean":([^,]+),.*/\1 \2 \3/' "$1/metrics.jsonl"; }
[[ "$(losses "$tmp/two_saved")" == "$(losses "$tmp/two")" ]] \
  || fail "2-rank resumed losses differ:\n$(diff <(losses "$tmp/two") <(losses "$tmp/two_saved"))"
sums() { grep -oE '"param_checksum": "[0-9a-f]+"' "$1"/step_000005/meta_000005.json; }
[[ "$(sums "$tmp/two_saved")" == "$(sums "$tmp/two")" ]] || fail "2-rank resumed final weights differ"

# 2. --nproc_per_node must agree with mpirun's world.
"$run_ranks" -np 2 "$trainer" "${common[@]}" --nproc_per_node=3 --output_dir="$tmp/bad" > "$tmp/bad.log" 2>&1 \
  && fail "a --nproc_per_node that disagrees with mpirun was accepted"
expect 'trainer: error: rank [01] of 2: --nproc_per_node=3 but mpirun started 2 ranks' "$tmp/bad.log"

# 3. GPU ranks (one GPU each, gradients through NCCL): without a GPU (this machine) every rank
#    says which rank, which device and why, and the job ends non-zero.
"$trainer" "${common[@]}" --device=cuda --nproc_per_node=2 --output_dir="$tmp/cuda" > "$tmp/cuda.log" 2>&1 \
  && fail "--device=cuda on 2 ranks ran without a GPU"
expect 'trainer: error: rank 0 of 2: --device=cuda: cuda: no NVIDIA driver' "$tmp/cuda.log"
expect 'trainer: error: rank 1 of 2: --device=cuda: cuda: no NVIDIA driver' "$tmp/cuda.log"
echo PASS
