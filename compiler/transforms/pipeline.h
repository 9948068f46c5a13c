//===- pipeline.h - the compiler's stages, in order -----------------------===//
//
// Declares the stages a built step goes through (DESIGN.md "Compiler
// pipeline"), so gptc, the trainer and the tests run the same passes. Each
// stage is dumpable: gptc --emit=<stage> prints the module after it.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_TRANSFORMS_PIPELINE_H_
#define GPT_SFT_COMPILER_TRANSFORMS_PIPELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace gpt_sft::compiler {

/// gpt: as the builder emitted it. autodiff: gpt-autodiff, then canonicalize and CSE.
/// fused: autodiff, then gpt-verify-static (every shape static) and gpt-fuse. planned: fused,
/// then gpt-plan-buffers (arena offsets, in-place updates, the arena size as a remark).
/// linalg: planned, then gpt-lower-fusions (each fusion region a linalg.generic).
enum class Stage { kGpt, kAutodiff, kFused, kPlanned, kLinalg };

/// "gpt", "autodiff", "fused", "planned", "linalg"; ParseStage's error lists the valid names.
std::vector<std::string> StageNames();
absl::Status ParseStage(const std::string& name, Stage* stage);

/// What a target's kernels let the passes assume (the cpu target: CpuTargetPasses()).
struct TargetPasses {
  /// The target's bf16 GEMMs round their inputs to bf16 themselves: gpt-elide-gemm-input-rounding
  /// runs before gpt-fuse.
  bool gemms_round_bf16_inputs = false;
  /// The target lowers the bf16 softcap's ops itself: gpt-fuse leaves them unfused.
  bool bf16_softcap_builtins = false;
  /// The target's kernels read and write bf16 buffers (kernel_builder.h's seam):
  /// gpt-mark-bf16-storage runs before gpt-plan-buffers.
  bool bf16_storage = false;
};
/// The cpu driver's kernels: both (runtime/kernels/cpu/matmul_bf16.h, softcap_bf16.h).
TargetPasses CpuTargetPasses();
/// The opencl and cuda targets' kernels: bf16 storage.
TargetPasses GpuTargetPasses();

/// Runs the passes up to and including `stage` on `module`; the error carries the
/// diagnostics. `print_ir_after_all` prints the module after every pass to stderr.
/// The passes' remarks (gpt-plan-buffers' arena size per function) go to `remarks` when given.
/// `buffer_alignment`: gpt-plan-buffers' (the GPU targets plan with a larger one). `target`:
/// what the target's kernels allow from the fused stage on (none by default).
absl::Status RunToStage(mlir::ModuleOp module, Stage stage, bool print_ir_after_all = false,
                        std::vector<std::string>* remarks = nullptr, int64_t buffer_alignment = 64,
                        const TargetPasses& target = {});

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_TRANSFORMS_PIPELINE_H_
