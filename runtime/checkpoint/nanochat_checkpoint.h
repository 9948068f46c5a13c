// nanochat's own checkpoints, in and out (NANOCHAT.md 7): a directory holding
// model_%06d.pt (torch.save of model.state_dict(): wte bf16, every other tensor fp32;
// torch_state_dict.h) and meta_%06d.json (step, val_loss, metrics, model_config).
//
// Loading takes a checkpoint directory (the numerically largest step among files named
// exactly model_<digits>.pt, HEAD's rule) or a model_<digits>.pt file, reads the meta of the
// same step beside it, and fills a new ParamStore of the meta's model_config: names exactly
// the model's (an exact "_orig_mod." prefix stripped, as HEAD does), shapes the model's,
// bf16 widened exactly. Every error names the file and the tensor.
//
// Saving writes what nanochat's checkpoint_manager.load_model reads: model_%06d.pt with wte
// rounded to bf16 (round to nearest, ties to even, as torch's .to(torch.bfloat16)) and the
// rest fp32, under the archive name model_%06d, and a meta with nanochat's keys only. Both
// files are written in full to temp files first, then renamed model first, meta second (a new
// model whose meta cannot follow is removed), as SaveCheckpoint does; the bytes are a function
// of the weights and the record alone.
#ifndef GPT_SFT_RUNTIME_CHECKPOINT_NANOCHAT_CHECKPOINT_H_
#define GPT_SFT_RUNTIME_CHECKPOINT_NANOCHAT_CHECKPOINT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/checkpoint_meta.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::runtime {

struct NanochatCheckpointFiles {
  std::string dir;
  int64_t step = 0;
  std::string model_path, meta_path;  // <dir>/model_%06d.pt, <dir>/meta_%06d.json
};

/// `path`: a nanochat checkpoint directory or one of its model_<digits>.pt files.
absl::StatusOr<NanochatCheckpointFiles> FindNanochatCheckpoint(const std::string& path);

/// FindNanochatCheckpoint, then the meta and the model. `meta.record` carries the file's step,
/// val_loss and metrics; the extras of our own format are absent.
absl::StatusOr<LoadedCheckpoint> LoadNanochatCheckpoint(const std::string& path);

/// Writes <dir>/model_%06d.pt and <dir>/meta_%06d.json of `record.step` (dir created if missing).
absl::StatusOr<NanochatCheckpointFiles> SaveNanochatCheckpoint(const std::string& dir, const ParamStore& store,
                                                               const CheckpointRecord& record,
                                                               const SaveOptions& options = {});

/// float32 -> bfloat16 bits, round to nearest even (NaN stays NaN), as torch rounds.
uint16_t RoundToBfloat16(float value);

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_CHECKPOINT_NANOCHAT_CHECKPOINT_H_
