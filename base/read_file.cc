// Implements ReadFile with an ifstream read in one go.
#include "base/read_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace gpt_sft::base {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return bytes.str();
}

}  // namespace gpt_sft::base
