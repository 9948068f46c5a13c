// The pre-tokenizer: splits text into chunks with nanochat's GPT-4-style pattern, so BPE
// merges never cross a chunk boundary.
#ifndef GPT_SFT_DATA_TOKENIZER_SPLIT_PATTERN_H_
#define GPT_SFT_DATA_TOKENIZER_SPLIT_PATTERN_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace gpt_sft::data {

/// GPT-4's cl100k pattern with digits grouped {1,2} (nanochat). Possessive quantifiers
/// and \p{..} classes: it needs PCRE2, not std::regex.
inline constexpr std::string_view kSplitPattern =
    R"('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)";

/// A compiled split pattern (PCRE2 with UTF + UCP, JIT-compiled). Thread-safe: each
/// call to ForEachChunk uses its own match data.
///
/// Byte fallback: the pattern is defined on Unicode text, so the input is cut into
/// maximal runs of valid UTF-8; the pattern splits each run, and every byte of an
/// invalid sequence becomes a chunk of its own. Concatenating the chunks always gives
/// back the input exactly. (PCRE2_MATCH_INVALID_UTF was the alternative; it leaves invalid
/// bytes unmatched, so a run of them would become one chunk, and it needs PCRE2 >= 10.34.
/// Our own validation is explicit and gives one chunk per invalid byte on any version.)
class SplitPattern {
 public:
  static absl::StatusOr<SplitPattern> Compile(std::string_view pattern);
  SplitPattern(SplitPattern&&) noexcept;
  SplitPattern& operator=(SplitPattern&&) noexcept;
  ~SplitPattern();

  /// Calls `fn` with each chunk of `text`, in order; chunks are never empty.
  void ForEachChunk(std::string_view text, absl::FunctionRef<void(std::string_view)> fn) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Compiled;
  SplitPattern(std::string pattern, std::unique_ptr<Compiled> compiled);
  void SplitValidUtf8(std::string_view run, absl::FunctionRef<void(std::string_view)> fn) const;

  std::string pattern_;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TOKENIZER_SPLIT_PATTERN_H_
