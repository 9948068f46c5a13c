#include "trainer/random_checkpoint.h"

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::trainer {

absl::StatusOr<runtime::ResolvedCheckpoint> WriteRandomCheckpoint(const std::string& dir,
                                                                  const compiler::ModelConfig& config,
                                                                  uint64_t seed, int64_t step,
                                                                  bool zero_output_projections) {
  absl::StatusOr<runtime::ParamStore> store = runtime::ParamStore::Create(config);
  if (!store.ok()) return store.status();
  store->InitNanochat(seed, zero_output_projections);
  runtime::CheckpointRecord record;
  record.step = step;
  return runtime::SaveCheckpoint(dir, *store, record);
}

}  // namespace gpt_sft::trainer
