// CompiledStep: one training step on the compiled path, the trainer's default
// (--compile=true). It compiles the step for a StepConfig once - or loads it from the
// on-disk cache (compiler/codegen/step_compiler.h) - and runs micro_step and
// optimizer_step with runtime::Executable over the ParamStore's weights, which it updates
// in place. It owns the gradient buffers and the optimizer state, like EagerStep, and has
// the same training interface, so the trainer's loop is one loop for both paths.
// Evaluation and checkpoints stay with the interpreter and the ParamStore.
//
//   auto step = CompiledStep::Create(config, &params, {.cache_dir = base + "/compile_cache"});
//   for (micro-batches) loss = (*step)->MicroStep(batch);
//   (*step)->OptimizerStep(lrm);
#ifndef GPT_SFT_TRAINER_COMPILED_STEP_H_
#define GPT_SFT_TRAINER_COMPILED_STEP_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/builder/step_config.h"
#include "runtime/base/tensor.h"
#include "runtime/collectives/communicator.h"
#include "runtime/executable/executable.h"
#include "runtime/params/param_store.h"
#include "trainer/eager_step.h"

namespace gpt_sft::trainer {

struct CompiledStepOptions {
  std::string cache_dir;  // the artifact cache; empty: compile without caching
  int num_threads = 0;
  bool profile = false;
  /// The data-parallel ranks (null: one). Its world size must be config.dp_world_size. With
  /// a cache dir, rank 0 compiles (or loads) first and the others wait at a barrier, then load
  /// rank 0's artifact from the cache: one compilation per machine, not one per rank.
  runtime::collectives::Communicator* communicator = nullptr;
};

/// What getting the executable cost, for the trainer's log and the benchmark.
struct CompileReport {
  bool cache_hit = false;
  double seconds = 0;          // compile (miss) or load from the cache (hit), + executable load
  double compile_seconds = 0;  // of the compilation that produced the artifact (earlier, on a hit)
  std::string key;
  std::string cache_entry;
  std::string cache_note;
  int64_t arena_bytes = 0;
  int64_t launches = 0;  // micro_step's
  int kernels = 0;       // compiled fusion kernels
};

class CompiledStep {
 public:
  static absl::StatusOr<std::unique_ptr<CompiledStep>> Create(const compiler::StepConfig& config,
                                                             runtime::ParamStore* params,
                                                             CompiledStepOptions options = {});
  ~CompiledStep();

  /// As EagerStep::MicroStep; a batch of another shape is an error naming it (no recompile).
  absl::StatusOr<double> MicroStep(const StepBatch& batch);
  /// As EagerStep::OptimizerStep.
  absl::Status OptimizerStep(double lr_multiplier);
  absl::Status ResetGradients();
  /// Gives the step's scratch (the arena) back to the OS between steps, for work that runs
  /// beside it, e.g. the interpreter's evaluation (Executable::ReleaseScratchMemory).
  absl::Status ReleaseScratchMemory() { return executable_->ReleaseScratchMemory(); }

  const runtime::Tensor& grad(size_t i) const { return grads_[i]; }
  int64_t steps_taken() const { return steps_taken_; }
  const compiler::StepConfig& config() const { return config_; }
  const CompileReport& compile_report() const { return report_; }
  runtime::Executable& executable() { return *executable_; }

 private:
  CompiledStep(const compiler::StepConfig& config, runtime::ParamStore* params) : config_(config), params_(params) {}
  void ZeroGrads();

  compiler::StepConfig config_;
  runtime::ParamStore* params_;
  std::unique_ptr<runtime::Executable> executable_;
  CompileReport report_;
  std::vector<runtime::Tensor> grads_;
  std::vector<runtime::Tensor> state_;
  // Argument lists bound once; MicroStep swaps in the batch.
  std::vector<runtime::Tensor> micro_args_, optimizer_args_;
  size_t batch_first_ = 0;
  runtime::Tensor lr_multiplier_, step_number_;
  int64_t steps_taken_ = 0;
};

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_COMPILED_STEP_H_
