// Implements the error messages of ParseJson: a byte offset turned into a line and column,
// and nlohmann's reason without its "[json.exception...] parse error at ...: " prefix.
#include "base/json_file.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gpt_sft::base::json_internal {
namespace {

// "syntax error while parsing value - ..." out of
// "[json.exception.parse_error.101] parse error at line 3, column 14: syntax error ...".
absl::string_view Reason(absl::string_view what) {
  if (const size_t tag = what.find("] "); tag != absl::string_view::npos) what.remove_prefix(tag + 2);
  if (what.rfind("parse error", 0) == 0) {
    if (const size_t colon = what.find(": "); colon != absl::string_view::npos) what.remove_prefix(colon + 2);
  }
  return what;
}

}  // namespace

absl::Status SyntaxError(absl::string_view text, absl::string_view where, size_t byte, absl::string_view what) {
  // `byte` is 1-based and may be one past the end (an unexpected end of input).
  const size_t at = std::min(byte == 0 ? 0 : byte - 1, text.size());
  const absl::string_view before = text.substr(0, at);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t line_start = before.rfind('\n') == absl::string_view::npos ? 0 : before.rfind('\n') + 1;
  const size_t column = at - line_start + 1;
  return absl::InvalidArgumentError(absl::StrCat(where, ":", line, ":", column, ": not JSON: ", Reason(what)));
}

absl::Status OtherError(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": not JSON: ", Reason(what)));
}

}  // namespace gpt_sft::base::json_internal
