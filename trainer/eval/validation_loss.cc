#include "trainer/eval/validation_loss.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "trainer/batch_tensors.h"

namespace gpt_sft::trainer {

BatchSource LoaderSource(data::BatchLoader* loader) {
  return [loader]() { return loader->Next(); };
}

BatchSource VectorSource(const std::vector<data::Batch>* batches) {
  auto next = std::make_shared<size_t>(0);
  return [batches, next]() -> absl::StatusOr<data::Batch> {
    if (*next >= batches->size()) {
      return absl::OutOfRangeError(absl::StrCat("the batch source holds only ", batches->size(), " batches"));
    }
    return (*batches)[(*next)++];
  };
}

absl::StatusOr<ValidationLossResult> ValidationLoss(EagerStep& step, const BatchSource& source, int num_batches,
                                                    const EvaluationProgress& progress) {
  if (num_batches < 1) {
    return absl::InvalidArgumentError(absl::StrCat("validation needs at least one batch, got num_batches=", num_batches));
  }
  ValidationLossResult result;
  double sum = 0;
  for (int i = 0; i < num_batches; ++i) {
    const std::string what = absl::StrCat("validation batch ", i);
    absl::StatusOr<data::Batch> batch = source();
    if (!batch.ok()) return absl::Status(batch.status().code(), absl::StrCat(what, ": ", batch.status().message()));
    if (absl::Status s = CheckBatchFitsStep(*batch, step.config(), what); !s.ok()) return s;
    const int64_t supervised = data::CountSupervised(*batch);
    if (supervised == 0) {
      ++result.empty_batches;
      if (progress) progress("validation loss", i + 1, num_batches);
      continue;
    }
    absl::StatusOr<double> loss = step.Loss(ToStepBatch(*batch, step.config().packed));
    if (!loss.ok()) return absl::Status(loss.status().code(), absl::StrCat(what, ": ", loss.status().message()));
    result.losses.push_back(*loss);
    sum += *loss;
    result.supervised_tokens += supervised;
    ++result.batches;
    if (progress) progress("validation loss", i + 1, num_batches);
  }
  if (result.batches == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("none of the ", num_batches, " validation batches has a supervised target"));
  }
  result.mean_loss = sum / static_cast<double>(result.batches);
  return result;
}

}  // namespace gpt_sft::trainer
