#!/usr/bin/env bash
# Builds the bundle that travels to a lent GPU machine (one H200, CUDA driver and PyTorch, but
# no Bazel, MLIR or Abseil): the artifact runner with the cuda driver alone, every shared
# library it needs except the NVIDIA driver (glibc included, run through the bundle's own
# loader, so the host's glibc version does not matter), the step artifacts compiled here for
# --target=cuda, the interpreter's losses for the small config, and the scripts that run and
# time them (run.sh, pytorch_peer.py). See tests/gpu/README.md.
#
#   ./bazelw run //tests/gpu:make_bundle -- [--out=DIR] [--small_only] [--nanochat_dir=CHECKOUT]
#
# --out defaults to gpu_bundle/ in the workspace (git-ignored). The bundle is built in a
# temporary folder beside it and renamed into place, so a failed build leaves the old one.
# --nanochat_dir: a nanochat checkout; its model at the reference commit (3a5e0bc) is carried
# as the PyTorch peer. Without it the peer is our own PyTorch model (tests/golden/reference_gpt.py).
set -euo pipefail

runfile() { # the runfiles path of a workspace-relative file
  local r="${RUNFILES_DIR:-${TEST_SRCDIR:-$0.runfiles}}/gpt_sft/$1"
  [[ -e "$r" ]] || r="$(dirname "$0")/../../$1"
  [[ -e "$r" ]] || { echo "make_bundle: missing input $1" >&2; exit 1; }
  echo "$r"
}

out="${BUILD_WORKSPACE_DIRECTORY:-$PWD}/gpu_bundle"
small_only=0
nanochat_dir=""
for arg in "$@"; do
  case "$arg" in
    --out=*) out="${arg#--out=}" ;;
    --small_only) small_only=1 ;;
    --nanochat_dir=*) nanochat_dir="${arg#--nanochat_dir=}" ;;
    *) echo "make_bundle: unknown flag '$arg' (--out=DIR, --small_only, --nanochat_dir=DIR)" >&2; exit 2 ;;
  esac
done
[[ "$out" = /* ]] || out="${BUILD_WORKING_DIRECTORY:-$PWD}/$out"

gptc="$(runfile compiler/tools/gptc)"
runner="$(runfile trainer/run_step_cuda)"
reference_steps="$(runfile trainer/reference_steps)"

mkdir -p "$(dirname "$out")"
stage="$(mktemp -d "${out}.partial.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,lib,artifacts,peer}

# The runner, stripped of its line tables (they are for debugging here, not there).
strip -o "$stage/bin/run_step_cuda" "$runner"
chmod 755 "$stage/bin/run_step_cuda"

# Its libraries as ldd resolves them here: glibc's into lib/glibc (with the loader, and the
# pieces the NVIDIA driver links: libpthread, libdl, librt are stubs since glibc 2.34 but must
# exist for its DT_NEEDED), the rest into lib/. run.sh uses lib/glibc only where the host's
# glibc is older than ours.
mkdir -p "$stage/lib/glibc"
glibc_names=" ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 "
copy_lib() {
  local src="$1" name="$2" dir="$stage/lib"
  [[ "$glibc_names" == *" $name "* ]] && dir="$stage/lib/glibc"
  [[ -e "$dir/$name" ]] || cp -L "$src" "$dir/$name"
}
while read -r name arrow path _; do
  if [[ "$arrow" == "=>" && "$path" == /* ]]; then copy_lib "$path" "$name"; fi
  if [[ "$name" == /*ld-linux* ]]; then copy_lib "$name" "$(basename "$name")"; fi
done < <(ldd "$stage/bin/run_step_cuda")
libc_dir="$(dirname "$(readlink -f "$(ldd "$stage/bin/run_step_cuda" | awk '$1 == "libc.so.6" {print $3}')")")"
for name in libpthread.so.0 libdl.so.2 librt.so.1; do
  [[ -e "$libc_dir/$name" ]] && copy_lib "$libc_dir/$name" "$name"
done
getconf GNU_LIBC_VERSION | awk '{print $2}' >"$stage/lib/glibc/VERSION"

# The artifacts. small: depth 2, width 128, [4, 256] packed, two micro-steps (AdamW + Muon),
# checked against the interpreter's losses computed here. d20: nanochat's d20 at [4, 2048],
# padded rows, one micro-step: the timing config.
dtype="f32"
if "$gptc" --dtype=bfloat16 --depth=1 --n_embd=128 --vocab=256 --seq=8 --emit=gpt >/dev/null 2>&1; then dtype="bfloat16"; fi
# Each config twice: the matmuls through cuBLASLt (the default) and through the compiler's
# tiled gemm (*_tiled), so one GPU run measures both and checks both against the interpreter.
small_flags=(--depth=2 --n_embd=128 --vocab=4096 --sequence_len=256 --seq=256 --packed --grad_accum_steps=2)
d20_flags=(--depth=20 --n_embd=1280 --n_head=10 --vocab=65536 --sequence_len=2048 --seq=2048 --batch=4 --dtype="$dtype")
for gemm in cublaslt tiled; do
  suffix="$([[ $gemm == tiled ]] && echo _tiled || true)"
  "$gptc" --target=cuda --gemm="$gemm" --emit=artifact "${small_flags[@]}" \
    --output="$stage/artifacts/small$suffix.gptart" 2>"$stage/artifacts/small$suffix.compile.txt"
  if (( ! small_only )); then
    "$gptc" --target=cuda --gemm="$gemm" --emit=artifact "${d20_flags[@]}" \
      --output="$stage/artifacts/d20$suffix.gptart" 2>"$stage/artifacts/d20$suffix.compile.txt"
  fi
done
# And the small step under bf16 autocast (cuBLASLt on TF32 tensor cores: exact for bf16 inputs).
if [[ "$dtype" == bfloat16 ]]; then
  "$gptc" --target=cuda --gemm=cublaslt --emit=artifact "${small_flags[@]}" --dtype=bfloat16 \
    --output="$stage/artifacts/small_bf16.gptart" 2>"$stage/artifacts/small_bf16.compile.txt"
fi
# Attention through cuDNN's fused SDPA (--attention=cudnn): d20 as timed above, and a small
# unpacked bf16 step checked against the interpreter (packed rows keep the generated kernels,
# and cuDNN computes in bf16, so the check runs under bf16 autocast).
if [[ "$dtype" == bfloat16 ]]; then
  small_cudnn_flags=(--depth=2 --n_embd=128 --vocab=4096 --sequence_len=256 --seq=256 --grad_accum_steps=2)
  "$gptc" --target=cuda --attention=cudnn --emit=artifact "${small_cudnn_flags[@]}" --dtype=bfloat16 \
    --output="$stage/artifacts/small_cudnn.gptart" 2>"$stage/artifacts/small_cudnn.compile.txt"
  if (( ! small_only )); then
    "$gptc" --target=cuda --attention=cudnn --emit=artifact "${d20_flags[@]}" \
      --output="$stage/artifacts/d20_cudnn.gptart" 2>"$stage/artifacts/d20_cudnn.compile.txt"
  fi
fi
# What the compiler predicts for each timed config on each GPU it knows (compiler/cost), so that
# run.sh prints the measured times beside the prediction and the first GPU run calibrates it.
for gpu in h100 h200 a100; do
  "$gptc" --target=cuda --gemm=cublaslt --emit=cost_json --gpu="$gpu" "${small_flags[@]}" \
    >"$stage/artifacts/small_cost_$gpu.json" 2>/dev/null
  if (( ! small_only )); then
    "$gptc" --target=cuda --gemm=cublaslt --emit=cost_json --gpu="$gpu" "${d20_flags[@]}" \
      >"$stage/artifacts/d20_cost_$gpu.json" 2>/dev/null
  fi
done
# The interpreter's losses do not depend on the target: one reference per dtype.
for name in small small_bf16 small_cudnn; do
  [[ -e "$stage/artifacts/$name.gptart" ]] || continue
  "$reference_steps" --artifact="$stage/artifacts/$name.gptart" --seed=1 --steps=5 \
    --json="$stage/artifacts/${name}_reference.json" >/dev/null
done

# The scripts, and the PyTorch peer's model.
cp "$(runfile tests/gpu/run.sh)" "$stage/run.sh"
cp "$(runfile tests/gpu/pytorch_peer.py)" "$stage/peer/pytorch_peer.py"
cp "$(runfile tests/golden/reference_gpt.py)" "$(runfile tests/golden/reference_optim.py)" "$stage/peer/"
chmod 755 "$stage/run.sh"
peer_model="tests/golden/reference_gpt.py"
if [[ -n "$nanochat_dir" ]]; then
  mkdir -p "$stage/peer/nanochat"
  for f in __init__ gpt common muon adamw; do
    if ! git -C "$nanochat_dir" show "3a5e0bc:nanochat/$f.py" >"$stage/peer/nanochat/$f.py" 2>/dev/null; then
      [[ "$f" == __init__ ]] && : >"$stage/peer/nanochat/$f.py" && continue
      echo "make_bundle: --nanochat_dir=$nanochat_dir has no nanochat/$f.py at commit 3a5e0bc" >&2; exit 2
    fi
  done
  peer_model="nanochat/gpt.py at 3a5e0bc"
fi

commit="$(git -C "${BUILD_WORKSPACE_DIRECTORY:-.}" rev-parse --short HEAD 2>/dev/null || echo unknown)"
cat >"$stage/MANIFEST.json" <<JSON
{"commit": "$commit", "built": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "host_glibc": "$(getconf GNU_LIBC_VERSION)",
 "d20_dtype": "$dtype", "small_only": $small_only, "peer_model": "$peer_model"}
JSON

rm -rf "$out"
mv "$stage" "$out"
trap - EXIT
echo "make_bundle: $out ($(du -sh "$out" | cut -f1)): $(ls "$out/artifacts" | tr '\n' ' ')"
