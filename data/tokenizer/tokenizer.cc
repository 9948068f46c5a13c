// Implements Tokenizer: training, construction from merges, encode and decode. The file
// format lives in tokenizer_file.cc.
#include "data/tokenizer/tokenizer.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace gpt_sft::data {
namespace {

// Debian's Abseil is built with its own string_view type; its hash maps look up by it.
absl::string_view AsKey(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

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
  tok.rank_.reserve(256 + merges.size());
  for (int b = 0; b < 256; ++b) {
    tok.token_bytes_.push_back(std::string(1, static_cast<char>(b)));
    tok.rank_.emplace(tok.token_bytes_.back(), b);
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
    if (auto [it, added] = tok.rank_.emplace(bytes, next); !added) {
      *bad_merge = static_cast<int64_t>(i);
      return absl::InvalidArgumentError(absl::StrCat("merge ", i, " (", left, ", ", right,
                                                     ") repeats the bytes of token ", it->second));
    }
    tok.token_bytes_.push_back(std::move(bytes));
  }
  tok.merges_ = std::move(merges);
  return tok;
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 1);
  EncodeAppend(text, &out);
  return out;
}

void Tokenizer::EncodeAppend(std::string_view text, std::vector<int32_t>* out) const {
  split_->ForEachChunk(text, [&](std::string_view chunk) { EncodeChunk(chunk, out); });
}

// tiktoken's byte-pair merge: parts start as single bytes; repeatedly join the adjacent
// two whose concatenated bytes have the lowest rank, until no join is a token.
void Tokenizer::EncodeChunk(std::string_view chunk, std::vector<int32_t>* out) const {
  if (auto it = rank_.find(AsKey(chunk)); it != rank_.end()) {
    out->push_back(it->second);
    return;
  }
  constexpr int32_t kNone = std::numeric_limits<int32_t>::max();
  // starts[i] is where part i begins; ranks[i] is the rank of parts i and i+1 joined.
  std::vector<size_t> starts(chunk.size() + 1);
  for (size_t i = 0; i <= chunk.size(); ++i) starts[i] = i;
  auto join_rank = [&](size_t i) -> int32_t {
    if (i + 2 >= starts.size()) return kNone;
    auto it = rank_.find(AsKey(chunk.substr(starts[i], starts[i + 2] - starts[i])));
    return it == rank_.end() ? kNone : it->second;
  };
  std::vector<int32_t> ranks(starts.size());
  for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = join_rank(i);
  while (starts.size() > 2) {
    size_t best = 0;
    for (size_t i = 1; i + 2 < starts.size(); ++i) {
      if (ranks[i] < ranks[best]) best = i;
    }
    if (ranks[best] == kNone) break;
    starts.erase(starts.begin() + best + 1);
    ranks.erase(ranks.begin() + best + 1);
    ranks[best] = join_rank(best);
    if (best > 0) ranks[best - 1] = join_rank(best - 1);
  }
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    out->push_back(rank_.find(AsKey(chunk.substr(starts[i], starts[i + 1] - starts[i])))->second);
  }
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
