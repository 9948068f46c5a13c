#include "trainer/batch_tensors.h"

namespace gpt_sft::trainer {

StepBatch ToStepBatch(const data::Batch& batch, bool packed) {
  const runtime::Shape shape = {batch.B, batch.T};
  StepBatch out{runtime::Tensor::FromVector<int32_t>(shape, batch.inputs),
                runtime::Tensor::FromVector<int32_t>(shape, batch.targets)};
  if (packed) {
    out.segment_ids = runtime::Tensor::FromVector<int32_t>(shape, batch.segment_ids);
    out.positions = runtime::Tensor::FromVector<int32_t>(shape, batch.positions);
  }
  return out;
}

}  // namespace gpt_sft::trainer
