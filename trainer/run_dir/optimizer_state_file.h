// The optimizer state of a run's step as one safetensors file (optim_%06d.safetensors beside
// the model): every OptimizerState tensor under its name (e.g. "adamw.exp_avg/lm_head.weight"),
// F32, in order, and the steps taken in the header's metadata ("steps_taken"). The state is the
// same on every data-parallel rank (each applies the same averaged gradients), so one file holds
// it; rank 0 writes it. The metadata also holds a CRC-32 of each tensor's bytes and of
// steps_taken ("crc32/<name>"), checked on every read.
#ifndef GPT_SFT_TRAINER_RUN_DIR_OPTIMIZER_STATE_FILE_H_
#define GPT_SFT_TRAINER_RUN_DIR_OPTIMIZER_STATE_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "trainer/optimizer_state.h"

namespace gpt_sft::trainer {

/// "optim_000650.safetensors".
std::string OptimizerStateFileName(int64_t step);

/// Writes `state` to `path` atomically (base/atomic_file.h). Errors name the path.
absl::Status WriteOptimizerStateFile(const std::string& path, const OptimizerState& state);

/// Reads the file back; the header is checked (safetensors.h), every tensor must be F32 and
/// match its CRC-32 (a file written before the sums has none to check). Errors name the path
/// and the tensor (DataLoss for a corrupt or truncated file). The layout against a model is checked on import.
absl::StatusOr<OptimizerState> ReadOptimizerStateFile(const std::string& path);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_RUN_DIR_OPTIMIZER_STATE_FILE_H_
