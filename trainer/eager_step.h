// EagerStep: one training step on the interpreted path. It builds the step's IR for a
// StepConfig (compiler/builder), differentiates it (gpt-autodiff), and runs its entry points
// with the Interpreter over the ParamStore's weights, which it updates in place. It owns
// the gradient buffers and the optimizer state (AdamW moments, Muon momentum, the step
// count). This is the eager baseline (--compile=false), the evaluation path, and what the
// golden tests and the benchmark drive.
//
//   auto step = EagerStep::Create(config, &params);
//   for (micro-batches) loss = (*step)->MicroStep(batch);     // grads += d(loss / accum)
//   (*step)->OptimizerStep(1.0 - it / num_iterations);        // then grads are zero again
#ifndef GPT_SFT_TRAINER_EAGER_STEP_H_
#define GPT_SFT_TRAINER_EAGER_STEP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/builder/step_config.h"
#include "runtime/base/tensor.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/params/param_store.h"
#include "trainer/train_step.h"

namespace gpt_sft::trainer {

class EagerStep : public TrainStep {
 public:
  /// `params` must match config.model and outlive the step. config.dtype must be f32 or bf16
  /// (both stored as f32, the ParamStore's type). Errors name the field or the parameter at fault.
  static absl::StatusOr<std::unique_ptr<EagerStep>> Create(const compiler::StepConfig& config,
                                                          runtime::ParamStore* params,
                                                          runtime::InterpreterOptions options = {});
  ~EagerStep() override;

  std::string mode() const override { return "eager"; }
  std::string ValidationLine() const override {
    return "[VALIDATION] ✗ Model is NOT compiled (running in eager mode: the interpreter on the host)";
  }
  std::optional<CompileSummary> Compilation() const override { return std::nullopt; }
  /// The interpreter trains the ParamStore's weights in place: nothing to bring home.
  absl::Status SyncParamsToHost() override { return absl::OkStatus(); }
  absl::Status BeginEvaluation() override { return absl::OkStatus(); }
  int64_t Recompilations() const override { return 0; }

  /// Forward and backward of one micro-batch; adds the gradient of loss / grad_accum_steps
  /// into the gradient buffers. Returns the micro-batch's loss (the mean over its counted
  /// targets, not divided).
  absl::StatusOr<double> MicroStep(const StepBatch& batch) override;

  /// nanochat's AdamW + Muon update with every group at initial_lr x `lr_multiplier`, in
  /// place on the ParamStore; then the gradients are zero and the step count is one more.
  absl::StatusOr<std::optional<NonFiniteValue>> FirstNonFiniteGradient() override;
  absl::Status OptimizerStep(double lr_multiplier) override;

  absl::StatusOr<OptimizerState> ExportOptimizerState() override;
  absl::Status ImportOptimizerState(const OptimizerState& state) override;

  /// Drops the accumulated gradients (zeros), e.g. after micro-steps that are not to be
  /// applied.
  absl::Status ResetGradients() { return ZeroGrads(); }

  /// The loss only (evaluation): no gradient is touched.
  absl::StatusOr<double> Loss(const StepBatch& batch);

  /// The accumulated gradient of parameter i (ParamStore order).
  const runtime::Tensor& grad(size_t i) const { return grads_[i]; }
  /// Optimizer steps taken so far (AdamW's bias-correction count).
  int64_t steps_taken() const { return steps_taken_; }
  const compiler::StepConfig& config() const { return config_; }
  runtime::AllocatorStats allocator_stats() const;
  runtime::CachingAllocator& allocator();
  /// Per-op wall time of every run so far (InterpreterOptions::profile).
  std::vector<runtime::OpProfileEntry> profile() const;
  void ResetProfile();

 private:
  struct Compiled;  // the MLIR context, module and interpreter
  EagerStep(const compiler::StepConfig& config, runtime::ParamStore* params);
  std::vector<runtime::Tensor> ParamViews() const;
  std::vector<runtime::Tensor> BatchArgs(const StepBatch& batch) const;
  absl::Status ZeroGrads();

  compiler::StepConfig config_;
  runtime::ParamStore* params_;
  std::unique_ptr<Compiled> compiled_;
  std::vector<runtime::Tensor> grads_;
  std::vector<runtime::Tensor> state_;  // OptimizerStateNames order, parameter by parameter
  int64_t steps_taken_ = 0;
};

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_EAGER_STEP_H_
