// Our checkpoints as nanochat's own files, so nanochat's checkpoint_manager.load_model and
// chat_cli run them: under a nanochat base directory `out`,
//   <out>/<source>_checkpoints/d<n_layer>/model_%06d.pt + meta_%06d.json
//       (runtime/checkpoint/nanochat_checkpoint.h: wte bf16, rounded to nearest even; the rest fp32)
//   <out>/tokenizer/tokenizer.pkl
//       (data/tokenizer/tiktoken_pickle.h: the pickled tiktoken Encoding nanochat loads)
// Every file is written atomically; the bytes depend only on the weights, the record and the
// tokenizer, so the same checkpoint always exports to the same files.
#ifndef GPT_SFT_TRAINER_NANOCHAT_EXPORT_H_
#define GPT_SFT_TRAINER_NANOCHAT_EXPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "data/tokenizer/tokenizer.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/checkpoint_paths.h"

namespace gpt_sft::trainer {

struct NanochatExport {
  std::string model_path, meta_path, tokenizer_path;
};

/// Refuses a tokenizer whose vocabulary is not the model's vocab_size before writing anything.
absl::StatusOr<NanochatExport> ExportNanochat(const runtime::LoadedCheckpoint& checkpoint,
                                              const data::Tokenizer& tokenizer, const std::string& out,
                                              runtime::CheckpointSource source = runtime::CheckpointSource::kSft);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_NANOCHAT_EXPORT_H_
