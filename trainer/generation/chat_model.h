// Loading what the chat tools sample from (//trainer:chat, //trainer/generation:spelling_eval):
// a checkpoint and the tokenizer it was trained with. Both tools take the same flags, which
// the errors name:
//   --checkpoint_dir (empty: the largest-depth tag under <base_dir>/chatsft_checkpoints),
//   --step (unset: the last step there), --base_dir (empty: $NANOCHAT_BASE_DIR, else
//   ~/.cache/nanochat), --tokenizer (empty: the first that exists of
//   <checkpoint_dir>/tokenizer.txt, where the trainer keeps a copy in its run directory,
//   <checkpoint_dir>/../../tokenizer/tokenizer.txt, nanochat's layout, and
//   <base_dir>/tokenizer/tokenizer.txt).
// Relative paths are taken from where the user ran `bazel run` (data/tools/user_path.h).
#ifndef GPT_SFT_TRAINER_GENERATION_CHAT_MODEL_H_
#define GPT_SFT_TRAINER_GENERATION_CHAT_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "data/tokenizer/tokenizer.h"
#include "runtime/checkpoint/checkpoint.h"

namespace gpt_sft::trainer {

struct ChatModelPaths {
  std::string checkpoint_dir;
  std::optional<int64_t> step;
  std::string base_dir;
  std::string tokenizer;
};

/// The name of the tokenizer's copy in a run directory, beside the checkpoints.
inline constexpr std::string_view kRunDirTokenizerFile = "tokenizer.txt";

absl::StatusOr<runtime::LoadedCheckpoint> LoadChatCheckpoint(const ChatModelPaths& paths);

/// The tokenizer file --tokenizer names or the defaults above find; NotFound names every
/// place tried.
absl::StatusOr<std::string> FindChatTokenizer(const ChatModelPaths& paths);

/// The tokenizer file, checked against the model's vocabulary size (nanochat asserts the
/// same in build_model).
absl::StatusOr<data::Tokenizer> LoadChatTokenizer(const ChatModelPaths& paths, int model_vocab_size);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_GENERATION_CHAT_MODEL_H_
