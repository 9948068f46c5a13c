// What a step is compiled for. MLIR-free: the trainer picks the target from its --device
// flag (a device driver's name) without seeing the compiler's IR.
#ifndef GPT_SFT_COMPILER_CODEGEN_TARGET_H_
#define GPT_SFT_COMPILER_CODEGEN_TARGET_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpt_sft::compiler {

enum class Target {
  kCpu,     // host shared object (fusions) + the cpu driver's library builtins
  kOpenCl,  // every kernel generated: gpu dialect -> SPIR-V -> SPIR bitcode
  kCuda,    // the same kernels: gpu dialect -> NVVM -> PTX (sm_90)
};

/// Where a GPU target computes products of matrices: the vendor library, through the device
/// driver's `gemm.f32` builtin (cuda: cuBLASLt; opencl: CLBlast), or the compiler's own tiled
/// gemm. Per target from the environment: GPT_SFT_CUDA_GEMM (cublaslt, the default, or tiled),
/// GPT_SFT_OPENCL_GEMM (tiled, the default, or clblast); `gptc --gemm` sets them. Part of the
/// target's cache key. The cpu target has no choice (kTiled: its builtins are the interpreter's).
enum class GemmChoice { kVendor, kTiled };
/// InvalidArgument naming the variable and its values when it holds something else.
absl::StatusOr<GemmChoice> GemmChoiceFor(Target target);
/// "cublaslt" / "clblast" for kVendor, "tiled".
std::string GemmChoiceName(Target target, GemmChoice choice);
/// The variable GemmChoiceFor reads for `target` ("" for cpu).
const char* GemmChoiceVariable(Target target);

/// Where the cuda target computes attention: the compiler's generated flash kernels, or cuDNN's
/// fused SDPA through the cuda driver's `sdpa_fwd.cudnn` / `sdpa_bwd.cudnn` builtins
/// (runtime/device/SDPA_BUILTIN.md). From GPT_SFT_CUDA_ATTENTION (generated, the default, or
/// cudnn); `gptc --attention` sets it. Part of the cuda target's cache key. The other targets
/// have only the generated kernels (kGenerated whatever the variable says: it names cuda).
enum class AttentionChoice { kGenerated, kCudnn };
inline constexpr char kAttentionChoiceVariable[] = "GPT_SFT_CUDA_ATTENTION";
/// InvalidArgument naming the variable and its values when it holds something else.
absl::StatusOr<AttentionChoice> AttentionChoiceFor(Target target);
/// "generated", "cudnn".
const char* AttentionChoiceName(AttentionChoice choice);

/// "cpu", "opencl", "cuda": the name of the device driver that runs the target's artifacts.
const char* TargetName(Target target);
/// From a driver name ("cpu", "opencl", "cuda"); InvalidArgument listing the targets otherwise.
absl::StatusOr<Target> ParseTarget(std::string_view name);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_TARGET_H_
