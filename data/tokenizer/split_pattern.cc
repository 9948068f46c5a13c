// Implements SplitPattern over PCRE2 (8-bit, UTF, UCP, JIT).
#include "data/tokenizer/split_pattern.h"

#include <pcre2.h>

#include "absl/strings/str_cat.h"
#include "data/io/utf8.h"

namespace gpt_sft::data {

struct SplitPattern::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

SplitPattern::SplitPattern(std::string pattern, std::unique_ptr<Compiled> compiled)
    : pattern_(std::move(pattern)), compiled_(std::move(compiled)) {}
SplitPattern::SplitPattern(SplitPattern&&) noexcept = default;
SplitPattern& SplitPattern::operator=(SplitPattern&&) noexcept = default;
SplitPattern::~SplitPattern() = default;

absl::StatusOr<SplitPattern> SplitPattern::Compile(std::string_view pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  auto compiled = std::make_unique<Compiled>();
  compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                 PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (compiled->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    return absl::InvalidArgumentError(absl::StrCat("split pattern does not compile at offset ",
                                                   offset, ": ",
                                                   reinterpret_cast<const char*>(message)));
  }
  // JIT is an optimisation only: the interpreter gives the same matches if it fails.
  pcre2_jit_compile(compiled->code, PCRE2_JIT_COMPLETE);
  return SplitPattern(std::string(pattern), std::move(compiled));
}

void SplitPattern::SplitValidUtf8(std::string_view run,
                                  absl::FunctionRef<void(std::string_view)> fn) const {
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(compiled_->code, nullptr);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(run.data());
  size_t pos = 0;
  while (pos < run.size()) {
    // The run was validated already; NO_UTF_CHECK avoids rescanning it per match.
    int rc = pcre2_match(compiled_->code, subject, run.size(), pos, PCRE2_NO_UTF_CHECK, md,
                         nullptr);
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {  // a JIT stack limit: ask the interpreter
      rc = pcre2_match(compiled_->code, subject, run.size(), pos,
                       PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, nullptr);
    }
    if (rc < 0) {  // No match: impossible with kSplitPattern (its alternatives cover every
      fn(run.substr(pos));  // character), possible with a foreign one; never lose bytes.
      break;
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    if (ov[0] > pos) fn(run.substr(pos, ov[0] - pos));  // unmatched gap: keep it
    if (ov[1] == ov[0]) {  // an empty match: step one code point to make progress
      size_t next = ov[0] + 1;
      while (next < run.size() && (static_cast<unsigned char>(run[next]) & 0xC0) == 0x80) ++next;
      fn(run.substr(ov[0], next - ov[0]));
      pos = next;
      continue;
    }
    fn(run.substr(ov[0], ov[1] - ov[0]));
    pos = ov[1];
  }
  pcre2_match_data_free(md);
}

void SplitPattern::ForEachChunk(std::string_view text,
                                absl::FunctionRef<void(std::string_view)> fn) const {
  while (!text.empty()) {
    size_t valid = ValidUtf8PrefixLength(text);
    if (valid > 0) {
      SplitValidUtf8(text.substr(0, valid), fn);
      text.remove_prefix(valid);
    } else {
      fn(text.substr(0, 1));  // an invalid byte is a chunk of its own
      text.remove_prefix(1);
    }
  }
}

}  // namespace gpt_sft::data
