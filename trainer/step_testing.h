// Shared by the step tests (device_step_test, data_parallel_step_test): a small random model
// whose every gradient is non-zero, two-document batches, and the parameter distance the
// tests hold the compiled step to.
#ifndef GPT_SFT_TRAINER_STEP_TESTING_H_
#define GPT_SFT_TRAINER_STEP_TESTING_H_

#include <cstdint>

#include "model/model_config.h"
#include "data/collate/batch.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::trainer::testing {

/// nanochat's init (seed 11, output projections not zeroed) with lm_head drawn at random too:
/// nanochat's zero lm_head would hide every other gradient.
runtime::ParamStore RandomParams(const compiler::ModelConfig& model);

/// trainer/step_loop.h's SyntheticBatch: two documents per row, every fifth target ignored.
data::Batch TwoDocumentBatch(uint32_t seed, int B, int T, int vocab);

/// The worst parameter's max |actual - reference| over its max |reference|.
double MaxRelDiff(const runtime::ParamStore& actual, const runtime::ParamStore& reference);

}  // namespace gpt_sft::trainer::testing

#endif  // GPT_SFT_TRAINER_STEP_TESTING_H_
