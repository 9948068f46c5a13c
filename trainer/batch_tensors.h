// A data::Batch (the data room's [B, T] int32 vectors) as the StepBatch the step's entry
// points take (runtime Tensors). The training loop, the validation loss and //trainer:loss
// all convert through here, so a batch means the same thing on every path.
#ifndef GPT_SFT_TRAINER_BATCH_TENSORS_H_
#define GPT_SFT_TRAINER_BATCH_TENSORS_H_

#include <string>

#include "absl/status/status.h"
#include "data/collate/batch.h"
#include "compiler/builder/step_config.h"
#include "trainer/train_step.h"

namespace gpt_sft::trainer {

/// inputs and targets as [B, T] i32 tensors (copies); segment_ids and positions too when
/// `packed` (the step was built with StepConfig::packed), left null otherwise. The batch's
/// tensors must hold B*T values each (data::ValidateBatch guarantees it).
StepBatch ToStepBatch(const data::Batch& batch, bool packed);

/// True when every row is one conversation: segment id 0 and position t at every t, which
/// is what the unpacked (plain causal) step assumes. --packing=pad batches always are; a
/// best-fit batch is unless each row happens to hold a single conversation.
bool IsPlainCausal(const data::Batch& batch);

/// OK when `batch` has the [B, T] the step was built for (`batch_size`, `seq_len`) and, for
/// an unpacked step, is plain causal; the error names `what` (e.g. "batch 3 of f.json").
absl::Status CheckBatchFitsStep(const data::Batch& batch, const compiler::StepConfig& config,
                                const std::string& what);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_BATCH_TENSORS_H_
