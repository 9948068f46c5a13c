// LaunchWork: what one launch of an artifact does, independent of the GPU it runs on: its
// FLOPs and the unit they run on, the global bytes it reads and writes, its work-items, and
// how often each work-item touches its stack frame (priced by launch_cost.h when ptxas
// reports one). The rules, by launch:
//   * gemm.f32 builtin (cuBLASLt; runtime/device/GEMM_BUILTIN.md): 2 M N K FLOPs; TF32 tensor
//     cores when inputs_bf16 (CUBLAS_COMPUTE_32F_FAST_TF32), else fp32 cores (COMPUTE_32F,
//     runtime/device/cuda/cuda_device.cc); reads a, b (and c_in when beta != 0), writes c.
//   * sdpa_fwd.cudnn / sdpa_bwd.cudnn builtins (cuDNN; runtime/device/SDPA_BUILTIN.md): bf16
//     tensor cores at the vendor efficiency, 4 B H T^2 D / 2 FLOPs causal forward, 2.5x that
//     backward; reads its inputs, writes out and lse (dq, dk, dv).
//   * attention kernels: FLOPs from the step's shape over the visible (query, key) pairs of
//     causal attention, P = B H T (T + 1) / 2, per pair: forward 4 D (q.k, p v), dk/dv 8 D
//     (q.k, dO.v, p dO, ds q), dq 6 D (q.k, dO.v, ds k): the backward recomputes P, so it is
//     3.5x the forward. Document-causal (packed) attention skips more; P is its upper bound.
//   * every other kernel (fusions, norms, rotary, embedding, cross-entropy, optimizer
//     kernels): elementwise, kElementwiseFlopsPerElement per element of the largest buffer
//     it touches (reductions' outputs are small).
//   * kernels' bytes: each argument its PTX loads from counts as read once, each it stores to
//     as written once (ptx_kernel_facts.h); without that, every buffer but the last is read
//     and the last written (a lone buffer is updated in place), which the note says. Gather
//     and scatter kernels (embedding, embedding_grad_sum) touch only the rows they index.
//   * copies: source read, destination written; fills: destination written; collectives:
//     their buffer read and written, but not priced (no network model; launch_cost.h).
#ifndef GPT_SFT_COMPILER_COST_LAUNCH_WORK_H_
#define GPT_SFT_COMPILER_COST_LAUNCH_WORK_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "artifact/artifact.h"
#include "compiler/builder/step_config.h"
#include "compiler/cost/gpu_spec.h"
#include "compiler/cost/ptx_kernel_facts.h"

namespace gpt_sft::compiler::cost {

/// The PTX of a cuda module: its bytes (ptx), its source (cuda-fatbin); empty for others.
std::string_view PtxOf(const artifact::KernelModule& module);


/// FLOPs charged per element to a kernel with no rule of its own: a few multiply-adds, far
/// below the ~50 FLOP per 4-byte element at which an H100's fp32 cores would be the limit.
inline constexpr double kElementwiseFlopsPerElement = 4;
/// Stack-frame touches per work-item of a kernel with no rule of its own: written once, read
/// once. Attention kernels instead touch their private rows once per visible key (below).
inline constexpr double kFrameTouchesPerWorkItem = 2;
/// Accesses per frame byte per visible (query, key) pair in the attention kernels, whose
/// frames are their private rows (q, k, v, dO and accumulators of D floats): each pair reads
/// the one or two rows it dots with and reads and writes the one or two it accumulates into
/// (forward 1536 of 1120 bytes, dk/dv 3072 of 2048, dq 2048 of 1536 at D = 128).
inline constexpr double kAttentionFrameAccessesPerPair = 1.5;

/// Who wrote the code that runs: it sets the efficiency (launch_cost.h).
enum class Engine { kNone, kVendorLibrary, kGenerated };

/// The attention shape of the step, from its StepConfig.
struct StepShape {
  int64_t batch = 0, seq = 0, heads = 0, kv_heads = 0, head_dim = 0;
  bool packed = false;

  static StepShape Of(const StepConfig& config);
  /// B H T (T + 1) / 2: the (query, key) pairs causal attention visits.
  double CausalPairs() const;
};

struct LaunchWork {
  ComputeUnit unit = ComputeUnit::kNone;
  Engine engine = Engine::kNone;
  double flops = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t work_items = 0;               // kernels: grid x block
  double frame_touches_per_work_item = 0;  // how often a work-item reads or writes its whole frame
  bool priced = true;                   // false: shown with zero time (collectives, malformed builtins)
  std::string rule;                     // which rule gave the FLOPs: "gemm 2MNK", "attention fwd", ...
  std::string note;                     // what the row must say ("bytes assumed", "not priced", ...)
};

/// Kernel facts by (module index, symbol) for every PTX module of an artifact; modules whose
/// PTX does not parse are left out (their kernels fall back to the argument-order rule).
using ArtifactKernelFacts = std::map<std::pair<int, std::string>, KernelFacts>;
ArtifactKernelFacts ReadArtifactKernelFacts(const artifact::Artifact& artifact);

/// `launch`'s work under the rules above. `facts` may lack the launch's kernel.
LaunchWork WorkOfLaunch(const artifact::Launch& launch, const StepShape& shape, const ArtifactKernelFacts& facts);

/// A kernel's name without the numeric suffix the compiler adds to tell variants apart
/// ("fusion_17" -> "fusion", "rms_norm_2" -> "rms_norm").
std::string KernelStem(const std::string& name);

}  // namespace gpt_sft::compiler::cost

#endif  // GPT_SFT_COMPILER_COST_LAUNCH_WORK_H_
