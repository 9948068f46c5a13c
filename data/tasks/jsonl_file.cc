// Implements ForEachJsonlLine.
#include "data/tasks/jsonl_file.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "data/io/utf8.h"

namespace gpt_sft::data {

absl::Status ForEachJsonlLine(const std::string& path,
                              const std::function<absl::Status(const std::string&, const std::string&)>& fn) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open (missing file?)"));
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const std::string where = absl::StrCat(path, ":", lineno);
    if (ValidUtf8PrefixLength(line) != line.size()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": not valid UTF-8 (byte ",
                                                     ValidUtf8PrefixLength(line) + 1, " of the line)"));
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (absl::Status s = fn(line, where); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::data
