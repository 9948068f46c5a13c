// Implements Tokenizer: training, construction from merges, encode and decode. The file
// format lives in tokenizer_file.cc.
#include "data/tokenizer/tokenizer.h"

#include "absl/strings/str_cat.h"

namespace gpt_sft::data {

absl::StatusOr<Tokenizer> Tokenizer::Train(const std::vector<std::string>& texts, int vocab_size) {
  if (vocab_size < kMinVocabSize) {
    return absl::InvalidArgumentError(absl::StrCat("--vocab_size=", vocab_size,
                                                   " is too small: at least ", kMinVocabSize,
                                                   " (256 bytes + 9 special tokens)"));
  }
  if (vocab_size > kMaxVocabSize) {
    return absl::InvalidArgumentError(absl::StrCat("--vocab_size=", vocab_size,
                                                   " is too large: at most ", kMaxVocabSize));
  }
  absl::StatusOr<SplitPattern> split = SplitPattern::Compile(kSplitPattern);
  if (!split.ok()) return split.status();
  std::vector<BpeMerge> merges = TrainBpe(*split, texts, vocab_size - 256 - kNumSpecialTokens);
  return FromMerges(kSplitPattern, std::move(merges));
}

absl::StatusOr<Tokenizer> Tokenizer::FromMerges(std::string_view pattern,
                                                std::vector<BpeMerge> merges) {
  int64_t bad_merge = -1;
  return Build(pattern, std::move(merges), &bad_merge);
}

absl::StatusOr<Tokenizer> Tokenizer::Build(std::string_view pattern, std::vector<BpeMerge> merges,
                                           int64_t* bad_merge) {
  absl::StatusOr<SplitPattern> split = SplitPattern::Compile(pattern);
  if (!split.ok()) return split.status();
  Tokenizer tok;
  tok.split_ = std::make_unique<SplitPattern>(*std::move(split));
  if (merges.size() > static_cast<size_t>(kMaxMerges)) {
    return absl::InvalidArgumentError(absl::StrCat(merges.size(), " merges are more than the ",
                                                   kMaxMerges, " allowed"));
  }
  tok.token_bytes_.reserve(256 + merges.size());
  absl::flat_hash_map<std::string, int32_t> id_of_bytes;
  id_of_bytes.reserve(256 + merges.size());
  for (int b = 0; b < 256; ++b) {
    tok.token_bytes_.push_back(std::string(1, static_cast<char>(b)));
    id_of_bytes.emplace(tok.token_bytes_.back(), b);
  }
  for (size_t i = 0; i < merges.size(); ++i) {
    const auto [left, right] = merges[i];
    const int32_t next = static_cast<int32_t>(tok.token_bytes_.size());
    if (left < 0 || right < 0 || left >= next || right >= next) {
      *bad_merge = static_cast<int64_t>(i);
      return absl::InvalidArgumentError(absl::StrCat("merge ", i, " (", left, ", ", right,
                                                     ") names a token that does not exist yet "
                                                     "(ids so far are 0..", next - 1, ")"));
    }
    std::string bytes = tok.token_bytes_[left] + tok.token_bytes_[right];
    if (auto [it, added] = id_of_bytes.emplace(bytes, next); !added) {
      *bad_merge = static_cast<int64_t>(i);
      return absl::InvalidArgumentError(absl::StrCat("merge ", i, " (", left, ", ", right,
                                                     ") repeats the bytes of token ", it->second));
    }
    tok.token_bytes_.push_back(std::move(bytes));
  }
  tok.merges_ = std::move(merges);
  tok.encoder_ = std::make_unique<const BpeEncoder>(std::move(id_of_bytes));
  return tok;
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 1);
  EncodeAppend(text, &out);
  return out;
}

void Tokenizer::EncodeAppend(std::string_view text, std::vector<int32_t>* out) const {
  split_->ForEachChunk(text, [&](std::string_view chunk) { encoder_->EncodeChunk(chunk, out); });
}

std::string Tokenizer::Decode(absl::Span<const int32_t> ids) const {
  std::string text;
  for (int32_t id : ids) {
    if (id >= 0 && id < num_mergeable()) {
      text += token_bytes_[id];
    } else if (auto special = AsSpecial(id)) {
      text += SpecialTokenText(*special);
    }  // ids outside the vocabulary decode to nothing
  }
  return text;
}

std::optional<SpecialToken> Tokenizer::AsSpecial(int32_t id) const {
  const int32_t k = id - num_mergeable();
  if (k < 0 || k >= kNumSpecialTokens) return std::nullopt;
  return static_cast<SpecialToken>(k);
}

}  // namespace gpt_sft::data
