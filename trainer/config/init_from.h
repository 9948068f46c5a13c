// --init_from=PATH: fine-tune a nanochat checkpoint directly. PATH is a nanochat checkpoint
// directory or one of its model_XXXXXX.pt files (runtime/checkpoint/nanochat_checkpoint.h);
// its tokenizer is --init_tokenizer when given (nanochat's tokenizer.pkl, or a tokenizer file
// of ours), else the first that exists of
//   <checkpoint dir>/tokenizer.pkl
//   <checkpoint dir>/../../tokenizer/tokenizer.pkl   (nanochat's <base>/<source>_checkpoints/<tag>/ layout)
// Errors name the flag and every path looked at; a tokenizer whose vocabulary is not the
// model's vocab_size is refused with both numbers.
#ifndef GPT_SFT_TRAINER_CONFIG_INIT_FROM_H_
#define GPT_SFT_TRAINER_CONFIG_INIT_FROM_H_

#include <string>

#include "absl/status/statusor.h"
#include "data/tokenizer/tokenizer.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/checkpoint_paths.h"

namespace gpt_sft::trainer {

struct InitSource {
  runtime::ResolvedCheckpoint where;     // the .pt and meta files read
  runtime::LoadedCheckpoint checkpoint;  // the weights, fp32 (bf16 widened exactly)
  data::Tokenizer tokenizer;
  std::string tokenizer_path;
};

/// `init_from` and `init_tokenizer` are the flags' values (`init_tokenizer` may be empty).
absl::StatusOr<InitSource> LoadInitSource(const std::string& init_from, const std::string& init_tokenizer);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_CONFIG_INIT_FROM_H_
