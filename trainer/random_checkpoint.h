// A randomly initialised checkpoint: a ParamStore of `config` with nanochat's init from a seed,
// saved through runtime/checkpoint. The demo's base model and the tests' tiny models.
#ifndef GPT_SFT_TRAINER_RANDOM_CHECKPOINT_H_
#define GPT_SFT_TRAINER_RANDOM_CHECKPOINT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "model/model_config.h"
#include "runtime/checkpoint/checkpoint_paths.h"

namespace gpt_sft::trainer {

absl::StatusOr<runtime::ResolvedCheckpoint> WriteRandomCheckpoint(const std::string& dir,
                                                                  const compiler::ModelConfig& config,
                                                                  uint64_t seed, int64_t step = 0,
                                                                  bool zero_output_projections = true);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_RANDOM_CHECKPOINT_H_
