// nanochat's special tokens, in nanochat's order. They are never trained: the token at
// position i gets id n_mergeable + i (data/tokenizer/tokenizer.h).
#ifndef GPT_SFT_DATA_TOKENIZER_SPECIAL_TOKENS_H_
#define GPT_SFT_DATA_TOKENIZER_SPECIAL_TOKENS_H_

#include <array>
#include <string_view>

namespace gpt_sft::data {

enum class SpecialToken {
  kBos,
  kUserStart,
  kUserEnd,
  kAssistantStart,
  kAssistantEnd,
  kPythonStart,
  kPythonEnd,
  kOutputStart,
  kOutputEnd,
};

inline constexpr int kNumSpecialTokens = 9;

/// The literal text of each special token, indexed by the enum's value.
inline constexpr std::array<std::string_view, kNumSpecialTokens> kSpecialTokenTexts = {
    "<|bos|>",          "<|user_start|>",   "<|user_end|>",
    "<|assistant_start|>", "<|assistant_end|>", "<|python_start|>",
    "<|python_end|>",   "<|output_start|>", "<|output_end|>",
};

inline std::string_view SpecialTokenText(SpecialToken t) {
  return kSpecialTokenTexts[static_cast<int>(t)];
}

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TOKENIZER_SPECIAL_TOKENS_H_
