// TrainStep: one training step as the trainer's loop sees it, whatever runs it: the
// interpreter (EagerStep, --compile=false) or a compiled step on a device (DeviceStep, any
// --device). RunSft is one loop over this interface, so a new device adds no branch there.
//
// The weights the trainer evaluates and saves are the ParamStore's (nanochat's orig_model):
// a step that trains elsewhere (device memory) brings them home in SyncParamsToHost, which the
// loop calls before every evaluation and before saving.
#ifndef GPT_SFT_TRAINER_TRAIN_STEP_H_
#define GPT_SFT_TRAINER_TRAIN_STEP_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/base/tensor.h"
#include "trainer/non_finite_scan.h"
#include "trainer/optimizer_state.h"
#include "trainer/report/run_summary.h"

namespace gpt_sft::trainer {

/// One micro-batch as the entry points take it: [B, T] i32 each; segment_ids and positions
/// are set exactly when the step is packed.
struct StepBatch {
  runtime::Tensor inputs, targets, segment_ids, positions;
};

class TrainStep {
 public:
  virtual ~TrainStep() = default;

  /// "eager" or "compiled" (metrics records, the run summary).
  virtual std::string mode() const = 0;
  /// The [VALIDATION] line saying whether and how the step is compiled, and where it runs.
  virtual std::string ValidationLine() const = 0;
  /// What compiling the step cost (the run summary), when it was compiled.
  virtual std::optional<CompileSummary> Compilation() const = 0;

  /// Forward and backward of one micro-batch; adds the gradient of loss / grad_accum_steps
  /// into the gradients. Returns the micro-batch's loss (its mean over counted targets).
  virtual absl::StatusOr<double> MicroStep(const StepBatch& batch) = 0;

  /// The first parameter (ParamStore order) whose accumulated gradient holds a NaN or an
  /// infinity, or nullopt. This rank's gradients, before the update averages them over the
  /// ranks: the loop asks every rank before every update, so none is applied from a bad one.
  virtual absl::StatusOr<std::optional<NonFiniteValue>> FirstNonFiniteGradient() = 0;

  /// nanochat's AdamW + Muon update at initial_lr x `lr_multiplier`; then the gradients are
  /// zero and the step count is one more.
  virtual absl::Status OptimizerStep(double lr_multiplier) = 0;

  /// Makes the ParamStore hold the trained weights.
  virtual absl::Status SyncParamsToHost() = 0;

  /// Around work that runs beside the step (the interpreter's evaluation): the step may give
  /// its scratch memory back before (one working set resident at a time) and brings the
  /// weights home (SyncParamsToHost).
  virtual absl::Status BeginEvaluation() = 0;

  /// A copy of the optimizer's state (brought home from the device where it lives there).
  virtual absl::StatusOr<OptimizerState> ExportOptimizerState() = 0;
  /// Replaces the optimizer's state with `state` (a checkpoint's): the names and shapes must be
  /// this step's, in order; errors name the first that differs. The gradients are zeroed.
  virtual absl::Status ImportOptimizerState(const OptimizerState& state) = 0;

  /// Compilations of the step after it was made (0 when nothing compiles).
  virtual int64_t Recompilations() const = 0;
};

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_TRAIN_STEP_H_
