// Implements ForEachJsonlLine.
#include "data/tasks/jsonl_file.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "data/io/utf8.h"

namespace gpt_sft::data {

absl::Status ForEachJsonlLine(const std::string& path,
                              const std::function<absl::Status(const std::string&, const std::string&)>& fn) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open (missing file, or not a regular file)"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open for reading"));
  std::string line;
  int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string where = absl::StrCat(path, ":", lineno);
    if (const size_t valid = ValidUtf8PrefixLength(line); valid != line.size()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": not valid UTF-8 (byte ", valid + 1, " of the line)"));
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (absl::Status s = fn(line, where); !s.ok()) return s;
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error after line ", lineno));
  return absl::OkStatus();
}

}  // namespace gpt_sft::data
