// BuildStepModule: the training step of a StepConfig as a module of gpt IR, before autodiff:
// `@logits` (the forward to the softcapped logits), `@loss` (forward and loss, evaluation), `@micro_step` (forward, loss, a
// gpt.gradients placeholder and the accumulation into the gradient buffers) and
// `@optimizer_step` (nanochat's AdamW and Muon updates). Signatures: step_config.h; every
// argument and result carries its name in a `gpt.name` attribute.
#ifndef GPT_SFT_COMPILER_BUILDER_STEP_BUILDER_H_
#define GPT_SFT_COMPILER_BUILDER_STEP_BUILDER_H_

#include "absl/status/statusor.h"
#include "compiler/builder/step_config.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
class MLIRContext;
class ModuleOp;
}  // namespace mlir

namespace gpt_sft::compiler {

/// Loads the dialects a step uses (gpt, func, arith) into `context`.
void LoadStepDialects(mlir::MLIRContext& context);

/// The three entry points for `config` (validated first; errors name the field). The
/// module verifies. Run gpt-autodiff (compiler/transforms) before executing micro_step.
/// With dtype kBF16 the forward carries autocast's rounding already (ApplyDtype).
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> BuildStepModule(mlir::MLIRContext& context,
                                                                 const StepConfig& config);

/// For kBF16, runs gpt-autocast-bf16 on the built `module`: the rounding to bf16 nanochat's
/// autocast does, on the forward, before autodiff. Nothing for f32 and f64.
absl::Status ApplyDtype(mlir::ModuleOp module, ElementType dtype);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_BUILDER_STEP_BUILDER_H_
