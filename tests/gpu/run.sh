#!/usr/bin/env bash
# The one prepared script for a lent GPU machine, run from the bundle //tests/gpu:make_bundle
# built (see tests/gpu/README.md):
#   (a) 5 steps of the small config on --device=cuda against the interpreter's losses (carried),
#       with the matmuls through cuBLASLt and through the compiler's tiled gemm, and under bf16
#       autocast (cuBLASLt on TF32 tensor cores);
#   (b) nanochat d20 (width 1280, 10 heads, vocab 65536) [4, 2048], 20 steps, both gemm
#       variants: ms/step, tokens/s, MFU against the H200's dense bf16 peak, GPU memory; and a
#       per-kernel profile of the default variant;
#   (c) the PyTorch peer on the same batches, eager and torch.compile(dynamic=False);
#   (c') attention through cuDNN's fused SDPA (--attention=cudnn): the small unpacked bf16 step
#       against the interpreter, d20 timed beside the generated attention kernels, and which
#       of the two was faster ("attention" in the JSON);
#   (d) beside them, the compiler's prediction for this GPU (compiler/cost, computed when the
#       bundle was made): step time, tokens/s, MFU, and for the profiled d20 run the measured
#       seconds per step of each op next to the predicted ones, which calibrates the model;
# then prints one JSON object (also written to $OUT/gpu_run.json when OUT is set). Each part
# has its own time limit so that the whole stays under 8 minutes; a part that fails is
# reported in the JSON and the others still run.
#
#   ./run.sh              everything
#   ./run.sh --check      only check that the runner starts here (a machine without a GPU
#                         must answer with the runner's one clear error, exit 2)
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
results="${OUT:-$here/results}"
mkdir -p "$results"
peak_flops="${GPU_PEAK_FLOPS:-989e12}"  # H200 SXM dense bf16 (Hopper tensor cores)

# The runner: natively when the host's glibc is at least the bundle's, else through the
# bundle's own loader and glibc (the NVIDIA driver still comes from the host). BUNDLE_GLIBC=always
# forces the latter (the bundle test checks that route here).
bundle_glibc="$(cat "$here/lib/glibc/VERSION")"
host_glibc="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
# The runner as a command (an array, so that `timeout` can run it).
if [[ "${BUNDLE_GLIBC:-auto}" != always && -n "$host_glibc" &&
      "$(printf '%s\n%s\n' "$bundle_glibc" "$host_glibc" | sort -V | head -1)" == "$bundle_glibc" ]]; then
  runner=(env "LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$here/bin/run_step_cuda")
else
  runner=("$here/lib/glibc/ld-linux-x86-64.so.2" --library-path "$here/lib/glibc:$here/lib" "$here/bin/run_step_cuda")
fi

# The NVIDIA libraries come from the machine: the runner dlopens libcuda.so.1 and libcublasLt.
# Where the loader's search would miss them (pip's wheels keep cuBLAS under site-packages), name
# them: the first found of the loader cache, the toolkit, and Python's nvidia packages.
find_library() { # find_library NAME_GLOB: the first path found, or nothing
  local found
  found="$(ldconfig -p 2>/dev/null | awk -v g="$1" '$1 ~ g {print $NF; exit}')"
  if [[ -z "$found" ]]; then
    local dirs=(/usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu)
    while IFS= read -r d; do dirs+=("$d"); done < <(python3 -c 'import site; print("\n".join(site.getsitepackages()))' 2>/dev/null)
    found="$(find "${dirs[@]}" -maxdepth 4 -name "$2" 2>/dev/null | sort -r | head -1)"
  fi
  echo "$found"
}
[[ -n "${GPT_SFT_LIBCUDA:-}" ]] || GPT_SFT_LIBCUDA="$(find_library '^libcuda[.]so[.]1$' 'libcuda.so.1')"
[[ -n "${GPT_SFT_LIBCUBLASLT:-}" ]] || GPT_SFT_LIBCUBLASLT="$(find_library '^libcublasLt[.]so[.]1[23]$' 'libcublasLt.so.1[23]')"
[[ -n "${GPT_SFT_LIBCUDNN:-}" ]] || GPT_SFT_LIBCUDNN="$(find_library '^libcudnn[.]so[.]9$' 'libcudnn.so.9')"
export GPT_SFT_LIBCUDA GPT_SFT_LIBCUBLASLT GPT_SFT_LIBCUDNN

if [[ "${1:-}" == "--check" ]]; then
  "${runner[@]}" --device=cuda --artifact="$here/artifacts/small.gptart" --steps=1
  exit $?
fi

# The most GPU memory in use (MiB) while a command runs, sampled every 100 ms by nvidia-smi.
with_peak_memory() {
  local tag="$1"; shift
  local samples="$results/$tag.memory.txt"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$samples" 2>/dev/null &
  local sampler=$!
  "$@"
  local rc=$?
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  if [[ -s "$samples" ]]; then sort -n "$samples" | tail -1; else echo 0; fi >"$results/$tag.peak_mib"
  return $rc
}

# The whole script stays under 8 minutes: each part gets its own limit, cut to what is left of
# 470 s; a part with under 10 s left is skipped (its exit status recorded as 125).
budget_s=470
part() { # part TAG LIMIT_S COMMAND...: stdout to TAG.out, stderr to TAG.err, exit status to TAG.rc
  local tag="$1" limit="$2"; shift 2
  local left=$(( budget_s - ($(date +%s) - start) ))
  (( limit > left )) && limit=$left
  if (( limit < 10 )); then
    echo "== $tag skipped: the 8-minute budget is spent" >&2
    echo 125 >"$results/$tag.rc"
    return
  fi
  echo "== $tag ($(date -u +%T), limit ${limit}s): $*" >&2
  with_peak_memory "$tag" timeout "$limit" "$@" >"$results/$tag.out" 2>"$results/$tag.err"
  echo $? >"$results/$tag.rc"
  tail -3 "$results/$tag.err" >&2
}

start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$results/gpu.txt" 2>&1
for variant in "" _tiled _bf16 _cudnn; do
  [[ -e "$here/artifacts/small$variant.gptart" ]] || continue
  reference="$here/artifacts/small$([[ $variant == _bf16 || $variant == _cudnn ]] && echo "$variant")_reference.json"
  # cuDNN keeps P and dS in its own precision where the interpreter rounds them its way: a
  # first tolerance, to be tightened from what the first GPU run prints.
  tolerance="$([[ $variant == _cudnn ]] && echo 1e-2 || echo 1e-4)"
  part "small$variant" 45 "${runner[@]}" --device=cuda --artifact="$here/artifacts/small$variant.gptart" --seed=1 --steps=5 \
    --expect_losses="$reference" --loss_tolerance="$tolerance" --json="$results/small$variant.json"
done
# In order of what matters most if the budget runs out: ours, the peers, then the rest.
if [[ -e "$here/artifacts/d20.gptart" ]]; then
  d20() { # d20 TAG LIMIT ARTIFACT STEPS [FLAGS...]
    local tag="$1" limit="$2" artifact="$3" steps="$4"; shift 4
    part "$tag" "$limit" "${runner[@]}" --device=cuda --artifact="$here/artifacts/$artifact" --seed=1 --steps="$steps" \
      --synthetic_batches=4 --json="$results/$tag.json" "$@"
  }
  d20 d20 100 d20.gptart 20 --warmup_steps=2
  [[ -e "$here/artifacts/d20_cudnn.gptart" ]] && d20 d20_cudnn 80 d20_cudnn.gptart 10 --warmup_steps=2
  part torch_eager 60 python3 "$here/peer/pytorch_peer.py" --mode=eager --steps=20 --warmup_steps=2
  part torch_compile 120 python3 "$here/peer/pytorch_peer.py" --mode=compile --steps=20 --warmup_steps=3
  d20 d20_profile 40 d20.gptart 3 --warmup_steps=1 --profile
  d20 d20_tiled 100 d20_tiled.gptart 10 --warmup_steps=2
fi

python3 - "$here" "$results" "$peak_flops" "$(( $(date +%s) - start ))" <<'PY' | tee "$results/gpu_run.json"
import json, os, sys
here, results, peak_flops, wall = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])


def read(name):
    try:
        with open(os.path.join(results, name)) as f:
            return f.read()
    except OSError:
        return None


def part(tag, json_file=None):
    """A part's exit status, peak GPU memory and figures (its JSON file, or its last stdout line)."""
    rc = read(f"{tag}.rc")
    if rc is None:
        return None
    out = {"exit_status": int(rc), "peak_gpu_memory_mib": int((read(f"{tag}.peak_mib") or "").strip() or 0)}
    lines = (read(f"{tag}.out") or "").strip().splitlines()
    text = read(json_file) if json_file else (lines[-1] if lines else None)
    try:
        out.update(json.loads(text))
    except (TypeError, ValueError):
        pass
    if int(rc) != 0:
        out["stderr_tail"] = (read(f"{tag}.err") or "")[-1500:]
    return out


with open(os.path.join(here, "MANIFEST.json")) as f:
    report = {"gpu": (read("gpu.txt") or "").strip(), "bundle": json.load(f), "wall_seconds": wall,
              "libcuda": os.environ.get("GPT_SFT_LIBCUDA", ""), "libcublaslt": os.environ.get("GPT_SFT_LIBCUBLASLT", ""),
              "libcudnn": os.environ.get("GPT_SFT_LIBCUDNN", "")}
for tag in ("small", "small_tiled", "small_bf16", "small_cudnn"):
    report[tag] = part(tag, f"{tag}.json")
    if report[tag] is not None:
        report[tag]["losses_match_interpreter"] = report[tag]["exit_status"] == 0
for tag in ("d20", "d20_tiled", "d20_cudnn", "d20_profile"):
    report[tag] = part(tag, f"{tag}.json")
# Which attention path was faster at d20: the generated kernels (d20) or cuDNN (d20_cudnn).
generated, cudnn = (report["d20"] or {}).get("tokens_per_second"), (report["d20_cudnn"] or {}).get("tokens_per_second")
if generated and cudnn:
    report["attention"] = {"faster": "cudnn" if cudnn > generated else "generated",
                           "cudnn_tokens_per_second_over_generated": cudnn / generated}
    print(f"attention: {report['attention']['faster']} was faster at d20 "
          f"(cuDNN / generated tokens/s = {cudnn / generated:.2f})", file=sys.stderr)
for tag in ("torch_eager", "torch_compile"):
    report[tag] = part(tag)
for tag in ("d20", "d20_tiled", "d20_cudnn"):
    r = report[tag] or {}
    if r.get("tokens_per_second") and r.get("flops_per_token"):
        r["mfu"] = r["tokens_per_second"] * r["flops_per_token"] / peak_flops
d20 = report["d20"] or {}
if d20.get("tokens_per_second") and d20.get("flops_per_token"):
    for peer in ("torch_eager", "torch_compile"):
        p = report[peer] or {}
        if p.get("tokens_per_second"):
            p["mfu"] = p["tokens_per_second"] * d20["flops_per_token"] / peak_flops
            report[f"speedup_vs_{peer}"] = d20["tokens_per_second"] / p["tokens_per_second"]
            if p.get("peak_gpu_memory_mib"):
                report[f"memory_ratio_vs_{peer}"] = d20.get("peak_gpu_memory_mib", 0) / p["peak_gpu_memory_mib"]
# The compiler's prediction for this GPU (make_bundle's cost JSON; H100's where the GPU is none
# it knows) beside what ran: the step, and seconds per step by op for the profiled d20 run.
def predicted(config):
    gpu = report["gpu"].upper()
    key = "h200" if "H200" in gpu else "a100" if "A100" in gpu else "h100"
    try:
        with open(os.path.join(here, "artifacts", f"{config}_cost_{key}.json")) as f:
            cost = json.load(f)
    except (OSError, ValueError):
        return None
    by_op = {}
    for function in cost["functions"]:
        if function["name"] in ("micro_step", "optimizer_step"):
            for launch in function["launches"]:
                by_op[launch["op"]] = by_op.get(launch["op"], 0.0) + launch["seconds"]
    step = cost["step"]
    return {"gpu": key, "step_seconds": step["seconds"], "tokens_per_second": step["tokens_per_second"],
            "mfu": step["mfu"], "seconds_per_step_by_op": by_op}
for config in ("small", "d20"):
    report[f"{config}_predicted"] = predicted(config)
profile = (report.get("d20_profile") or {}).get("profile") or []
if report["d20_predicted"] and profile:
    measured = {}
    for entry in profile:
        op = entry["label"].split(" (")[0]
        measured[op] = measured.get(op, 0.0) + entry["seconds_per_step"]
    predicted_by_op = report["d20_predicted"]["seconds_per_step_by_op"]
    report["d20_measured_vs_predicted_by_op"] = [
        {"op": op, "measured_s": measured[op], "predicted_s": predicted_by_op.get(op)}
        for op in sorted(measured, key=measured.get, reverse=True)]
report["goals"] = {"speedup_vs_torch_compile": ">= 1.1", "mfu (d20)": ">= 0.45", "memory_ratio_vs_torch_compile": "< 1"}
print(json.dumps(report, indent=1))
PY
