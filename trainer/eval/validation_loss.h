// Validation loss as nanochat's chat_sft computes it every `eval_every` steps: the loss of
// each of the first `eval_steps` validation batches (forward only, no gradient), averaged
// over batches (each batch's loss is already the mean over its supervised targets, so a
// batch counts once whatever its number of targets).
//
//   auto source = ...;  // rebuilt at every evaluation, so each sees the same first batches
//   auto val = ValidationLoss(*step, source, eval_steps);
#ifndef GPT_SFT_TRAINER_EVAL_VALIDATION_LOSS_H_
#define GPT_SFT_TRAINER_EVAL_VALIDATION_LOSS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "data/collate/batch.h"
#include "data/collate/loader.h"
#include "trainer/eager_step.h"
#include "trainer/eval/evaluation_progress.h"

namespace gpt_sft::trainer {

/// Where validation batches come from: each call returns the next one.
using BatchSource = std::function<absl::StatusOr<data::Batch>()>;

/// A source over `loader` (borrowed; it must outlive the source).
BatchSource LoaderSource(data::BatchLoader* loader);
/// A source over `batches` (borrowed), in order; OutOfRange after the last one.
BatchSource VectorSource(const std::vector<data::Batch>* batches);

struct ValidationLossResult {
  double mean_loss = 0;           // mean of the per-batch losses over the counted batches
  int64_t batches = 0;            // batches whose loss was counted
  int64_t empty_batches = 0;      // batches with no supervised target: skipped (their loss
                                  // is 0/0; nanochat would average in a NaN)
  int64_t supervised_tokens = 0;  // over the counted batches
  std::vector<double> losses;     // per counted batch, in order
};

/// Runs EagerStep::Loss on the next `num_batches` batches of `source` (num_batches >= 1).
/// Each batch must fit the step (CheckBatchFitsStep); errors name the batch's index.
/// FailedPrecondition when every batch was empty. `progress` hears ("validation loss", i, n)
/// after each batch.
absl::StatusOr<ValidationLossResult> ValidationLoss(EagerStep& step, const BatchSource& source, int num_batches,
                                                    const EvaluationProgress& progress = nullptr);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_EVAL_VALIDATION_LOSS_H_
