// The end-of-run check that a saved checkpoint is the trained model: load it back from disk
// (through the same checked loader chat and a later run use) and compare every tensor's
// bytes with the ParamStore that was trained. The caller then evaluates the reloaded weights
// and compares the validation loss too.
#ifndef GPT_SFT_TRAINER_RUN_DIR_CHECKPOINT_RELOAD_CHECK_H_
#define GPT_SFT_TRAINER_RUN_DIR_CHECKPOINT_RELOAD_CHECK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::trainer {

struct ReloadComparison {
  std::unique_ptr<runtime::ParamStore> reloaded;
  bool bit_exact = false;
  std::string mismatch;  // when not: the first tensor that differs, and where
};

/// Loads step `step` of checkpoint dir `dir` and compares it with `trained`. An unreadable
/// checkpoint is an error; a readable one that differs is a result with bit_exact false.
absl::StatusOr<ReloadComparison> ReloadAndCompare(const std::string& dir, int64_t step,
                                                  const runtime::ParamStore& trained);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_RUN_DIR_CHECKPOINT_RELOAD_CHECK_H_
