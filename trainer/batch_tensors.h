// A data::Batch as the step's arguments: [B, T] i32 tensors (segment ids and positions only
// for packed steps, whose IR takes them).
#ifndef GPT_SFT_TRAINER_BATCH_TENSORS_H_
#define GPT_SFT_TRAINER_BATCH_TENSORS_H_

#include "data/collate/batch.h"
#include "trainer/eager_step.h"

namespace gpt_sft::trainer {

StepBatch ToStepBatch(const data::Batch& batch, bool packed);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_BATCH_TENSORS_H_
