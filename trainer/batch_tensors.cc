#include "trainer/batch_tensors.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gpt_sft::trainer {
namespace {

runtime::Tensor Rows(const std::vector<int32_t>& values, int B, int T) {
  return runtime::Tensor::FromVector<int32_t>({B, T}, values);
}

}  // namespace

StepBatch ToStepBatch(const data::Batch& batch, bool packed) {
  StepBatch out;
  out.inputs = Rows(batch.inputs, batch.B, batch.T);
  out.targets = Rows(batch.targets, batch.B, batch.T);
  if (packed) {
    out.segment_ids = Rows(batch.segment_ids, batch.B, batch.T);
    out.positions = Rows(batch.positions, batch.B, batch.T);
  }
  return out;
}

bool IsPlainCausal(const data::Batch& batch) {
  for (int b = 0; b < batch.B; ++b) {
    for (int t = 0; t < batch.T; ++t) {
      const size_t i = batch.Offset(b, t);
      if (batch.segment_ids[i] != 0 || batch.positions[i] != t) return false;
    }
  }
  return true;
}

absl::Status CheckBatchFitsStep(const data::Batch& batch, const compiler::StepConfig& config,
                                const std::string& what) {
  const bool dynamic_t = config.seq_len == compiler::kDynamicDim;
  if (batch.B != config.batch_size || (!dynamic_t && batch.T != config.seq_len)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is [", batch.B, ", ", batch.T, "] but the step was built for [",
                                                   config.batch_size, ", ",
                                                   dynamic_t ? std::string("?") : std::to_string(config.seq_len), "]"));
  }
  if (!config.packed && !IsPlainCausal(batch)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " packs several conversations into a row (segment ids / ",
                                                   "positions) but the step was built unpacked"));
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::trainer
