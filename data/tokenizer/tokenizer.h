// The byte-level BPE tokenizer: nanochat's split pattern, rank-ordered merges (rank == id,
// ranks 0..255 are the single bytes in byte order) and nine special tokens after them.
#ifndef GPT_SFT_DATA_TOKENIZER_TOKENIZER_H_
#define GPT_SFT_DATA_TOKENIZER_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "data/tokenizer/bpe_encoder.h"
#include "data/tokenizer/bpe_trainer.h"
#include "data/tokenizer/special_tokens.h"
#include "data/tokenizer/split_pattern.h"

namespace gpt_sft::data {

class Tokenizer {
 public:
  /// The vocabulary sizes Train accepts: the 256 bytes and the 9 special tokens at least,
  /// kMaxMerges merges at most.
  static constexpr int kMinVocabSize = 256 + kNumSpecialTokens;
  static constexpr int kMaxVocabSize = 256 + kMaxMerges + kNumSpecialTokens;

  /// Trains vocab_size - 9 mergeable tokens on `texts` (vocab_size >= 265). If the texts
  /// run out of pairs first, the vocabulary is smaller and the special ids shift down,
  /// as in nanochat; vocab_size() then says so.
  static absl::StatusOr<Tokenizer> Train(const std::vector<std::string>& texts, int vocab_size);

  /// Builds a tokenizer from a pattern and a merge list (validated: each merge names
  /// existing tokens and creates a new byte string).
  static absl::StatusOr<Tokenizer> FromMerges(std::string_view pattern,
                                              std::vector<BpeMerge> merges);

  /// Reads a file written by Save (format: data/tokenizer/FORMAT.md). Rejects foreign,
  /// truncated and corrupt files; every error names the file and the line.
  static absl::StatusOr<Tokenizer> Load(const std::string& path);

  /// Writes atomically: a temp file beside `path`, fsync, rename. An existing file at
  /// `path` survives any failure untouched.
  absl::Status Save(const std::string& path) const;

  /// tiktoken's encode_ordinary: special-token strings in `text` are ordinary text. Any
  /// bytes are accepted (invalid UTF-8 bytes are chunks of their own, split_pattern.h),
  /// and Decode(Encode(s)) == s. Thread-safe; O(n log n) even for one huge chunk.
  std::vector<int32_t> Encode(std::string_view text) const;
  void EncodeAppend(std::string_view text, std::vector<int32_t>* out) const;

  /// The raw bytes of the tokens; special tokens decode to their literal text and ids
  /// outside [0, vocab_size()) decode to nothing.
  std::string Decode(absl::Span<const int32_t> ids) const;

  int32_t SpecialId(SpecialToken t) const { return num_mergeable() + static_cast<int32_t>(t); }
  std::optional<SpecialToken> AsSpecial(int32_t id) const;

  int vocab_size() const { return num_mergeable() + kNumSpecialTokens; }
  int num_merges() const { return static_cast<int>(merges_.size()); }
  int num_mergeable() const { return 256 + num_merges(); }
  const std::vector<BpeMerge>& merges() const { return merges_; }
  const std::string& pattern() const { return split_->pattern(); }
  /// The bytes of mergeable token `id` (0 <= id < num_mergeable()).
  const std::string& TokenBytes(int32_t id) const { return token_bytes_[id]; }

 private:
  Tokenizer() = default;
  // FromMerges, and on a merge that names a missing token or repeats a token's bytes,
  // sets *bad_merge to its index (Load turns that into a line number).
  static absl::StatusOr<Tokenizer> Build(std::string_view pattern, std::vector<BpeMerge> merges,
                                         int64_t* bad_merge);

  std::unique_ptr<SplitPattern> split_;
  std::vector<BpeMerge> merges_;
  std::vector<std::string> token_bytes_;  // id -> bytes
  std::unique_ptr<const BpeEncoder> encoder_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TOKENIZER_TOKENIZER_H_
