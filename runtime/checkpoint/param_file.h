// A ParamStore as one safetensors file: every tensor under its nanochat name, in the store's
// order, as F32 (the store is float32 throughout). Reading also accepts BF16 tensors, which
// nanochat-shaped files carry for transformer.wte.weight, and widens them exactly to float32.
#ifndef GPT_SFT_RUNTIME_CHECKPOINT_PARAM_FILE_H_
#define GPT_SFT_RUNTIME_CHECKPOINT_PARAM_FILE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/atomic_file.h"
#include "model/model_config.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::runtime {

/// Appends the whole file (header, then each tensor's bytes straight from the store, with no
/// copy of the weights) to `out`, which the caller then Syncs and Publishes.
absl::Status WriteParamFile(const ParamStore& store, const std::vector<std::pair<std::string, std::string>>& metadata,
                            base::AtomicFile& out);

/// Reads `path` into a new ParamStore of `config`. The file must hold exactly the store's
/// tensors (an exact "_orig_mod." prefix, which torch.compile adds, is stripped), each with the
/// store's shape, as F32 or BF16. Every check is made before the data is read; any error names
/// the file and the tensor. Returning a new store means a failed load overwrites nothing.
absl::StatusOr<ParamStore> ReadParamFile(const std::string& path, const compiler::ModelConfig& config);

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_CHECKPOINT_PARAM_FILE_H_
