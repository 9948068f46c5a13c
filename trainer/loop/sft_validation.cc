#include "trainer/loop/sft_validation.h"

#include <memory>

#include "trainer/run_dir/checkpoint_reload_check.h"
#include "trainer/eval/validation_loss.h"
#include "trainer/loop/rank_reductions.h"

namespace gpt_sft::trainer {
namespace {

/// nanochat rebuilds the validation loader at every evaluation, so it always sees the same
/// first batches. The batches are those of a one-rank loader, dealt out: this rank takes
/// batches rank, rank + world, ... of them (`eval_steps` in all), so every world size
/// evaluates exactly the same rows.
absl::StatusOr<double> MeanValidationLoss(EagerStep& step, const data::ConversationSource& val,
                                          data::LoaderOptions options, int eval_steps_per_rank, int rank,
                                          int world_size, const EvaluationProgress& progress) {
  options.rank = 0;
  options.world_size = 1;
  absl::StatusOr<std::unique_ptr<data::BatchLoader>> loader = data::BatchLoader::Create(&val, options);
  if (!loader.ok()) return loader.status();
  int64_t index = 0;
  BatchSource this_ranks_share = [&]() -> absl::StatusOr<data::Batch> {
    while (true) {
      absl::StatusOr<data::Batch> batch = (*loader)->Next();
      if (!batch.ok() || index++ % world_size == rank) return batch;
    }
  };
  absl::StatusOr<ValidationLossResult> result = ValidationLoss(step, this_ranks_share, eval_steps_per_rank, progress);
  if (!result.ok()) return result.status();
  return result->mean_loss;
}

}  // namespace

absl::StatusOr<double> GlobalValidationLoss(EagerStep& step, const data::ConversationSource& val,
                                            const data::LoaderOptions& options, int eval_steps,
                                            runtime::collectives::Communicator& world,
                                            const EvaluationProgress& progress) {
  absl::StatusOr<double> local =
      MeanValidationLoss(step, val, options, eval_steps, world.rank(), world.world_size(), progress);
  if (!local.ok()) return local.status();
  return ReduceOverRanks(world, *local, runtime::collectives::ReduceOp::kAvg);
}

absl::StatusOr<CheckpointSummary> VerifySavedCheckpoint(const std::string& dir, int64_t step,
                                                        const runtime::ParamStore& trained,
                                                        const compiler::StepConfig& config,
                                                        const runtime::InterpreterOptions& interpreter,
                                                        const data::ConversationSource& val,
                                                        const data::LoaderOptions& loader, int eval_steps,
                                                        double val_loss_saved,
                                                        runtime::collectives::Communicator& world) {
  if (absl::Status s = world.Barrier(); !s.ok()) return s;  // rank 0's files are complete
  absl::StatusOr<ReloadComparison> compared = ReloadAndCompare(dir, step, trained);
  if (!compared.ok()) return compared.status();
  absl::StatusOr<std::unique_ptr<EagerStep>> reloaded_step =
      EagerStep::Create(config, compared->reloaded.get(), interpreter);
  if (!reloaded_step.ok()) return reloaded_step.status();
  absl::StatusOr<double> reloaded_loss = GlobalValidationLoss(**reloaded_step, val, loader, eval_steps, world);
  if (!reloaded_loss.ok()) return reloaded_loss.status();
  absl::StatusOr<double> all_exact =
      ReduceOverRanks(world, compared->bit_exact ? 1.0 : 0.0, runtime::collectives::ReduceOp::kMin);
  if (!all_exact.ok()) return all_exact.status();
  CheckpointSummary c;
  c.step = step;
  c.verified = true;
  c.reload_bit_exact = *all_exact == 1.0;
  c.mismatch = compared->mismatch;
  c.val_loss_saved = val_loss_saved;
  c.val_loss_reloaded = *reloaded_loss;
  return c;
}

}  // namespace gpt_sft::trainer
