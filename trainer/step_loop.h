// StepLoop: a fixed number of training steps of any TrainStep over a list of batches, with
// the trainer's schedule (grad_accum micro-steps per step, lr multiplier 1 - it / steps), the
// losses and the time of each step: what the artifact runner (//trainer:run_step: a compiled
// artifact on a device) and the interpreter's reference (//trainer:reference_steps) both run,
// so their losses compare one to one.
#ifndef GPT_SFT_TRAINER_STEP_LOOP_H_
#define GPT_SFT_TRAINER_STEP_LOOP_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "artifact/artifact.h"
#include "compiler/builder/step_config.h"
#include "data/collate/batch.h"
#include "runtime/params/param_store.h"
#include "trainer/train_step.h"

namespace gpt_sft::trainer {

struct StepLoopOptions {
  int steps = 5;
  int grad_accum_steps = 1;
  int warmup_steps = 1;  // left out of the timing figures
  /// Called once when the warm-up steps are done (e.g. to drop their profile).
  std::function<void()> after_warmup;
};

struct StepLoopResult {
  std::vector<double> losses;        // per step: the mean of its micro-batches' losses
  std::vector<double> step_seconds;  // per step
  int64_t tokens_per_step = 0;       // positions per step (B x T x grad_accum)
  /// Median seconds per step after the warm-up (NaN when none is left), and tokens/s from it.
  double median_step_seconds = 0;
  double tokens_per_second = 0;
};

/// What both runners load: the artifact (and the StepConfig it carries), the weights of a
/// checkpoint directory (--step: -1 the latest) and the batches (//data:dump_batch --json).
struct StepLoopInputs {
  artifact::Artifact artifact;
  compiler::StepConfig config;
  std::unique_ptr<runtime::ParamStore> params;
  std::vector<StepBatch> batches;
};
/// Errors name the file or flag at fault (--artifact, --checkpoint_dir, --batches).
absl::StatusOr<StepLoopInputs> LoadStepLoopInputs(const std::string& artifact_path, const std::string& checkpoint_dir,
                                                  int64_t step, const std::string& batches_path);

/// The same without files, for timing a step where no data can travel (a large model on a
/// lent GPU machine): nanochat's init from `seed`, and `count` batches of SyntheticBatch.
absl::StatusOr<StepLoopInputs> SyntheticStepLoopInputs(const std::string& artifact_path, uint64_t seed, int count);

/// Where a runner's inputs come from: a checkpoint and a batch file together, or neither (then
/// synthetic ones from `seed`), as run_step's and reference_steps' flags say.
struct StepLoopSource {
  std::string artifact_path;
  std::string checkpoint_dir;
  int64_t step = -1;
  std::string batches_path;
  uint64_t seed = 1;
  int synthetic_batches = 4;
};
/// The inputs `source` names; InvalidArgument naming --checkpoint_dir and --batches when only one is given.
absl::StatusOr<StepLoopInputs> OpenStepLoopInputs(const StepLoopSource& source);

/// [B, T] rows of random ids below `vocab` (SplitMix64 of `seed`), each row two documents
/// (segment ids 0 and 1, positions restarting at the split T / 2 + row), every fifth target
/// ignored (-1).
data::Batch SyntheticBatch(uint64_t seed, int B, int T, int vocab);

/// Runs the steps, micro-batch k taking batches[k % batches.size()].
absl::StatusOr<StepLoopResult> RunSteps(TrainStep& step, const std::vector<StepBatch>& batches,
                                        const StepLoopOptions& options);

/// {"losses": [...], "step_seconds": [...], "median_step_seconds": ..., "tokens_per_second": ...}
/// merged into `fields` (a JSON object's text, "{}" for none).
std::string StepLoopJson(const StepLoopResult& result, const std::string& fields);

/// The losses of a StepLoopJson file; errors name the file.
absl::StatusOr<std::vector<double>> ReadLosses(const std::string& path);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_STEP_LOOP_H_
