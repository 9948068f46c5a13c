// Paths given on the command line are relative to where the user ran `bazel run`, not to
// the runfiles directory Bazel starts the binary in.
#ifndef GPT_SFT_DATA_TOOLS_USER_PATH_H_
#define GPT_SFT_DATA_TOOLS_USER_PATH_H_

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"

namespace gpt_sft::data {

inline std::string UserPath(const std::string& path) {
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || wd == nullptr || *wd == '\0') return path;
  return std::string(wd) + "/" + path;
}

/// A comma-separated list of paths ("a.jsonl,b.jsonl"), each as UserPath; empty items skipped.
inline std::vector<std::string> UserPaths(const std::string& comma_separated) {
  std::vector<std::string> out;
  for (absl::string_view p : absl::StrSplit(comma_separated, ',', absl::SkipEmpty())) out.push_back(UserPath(std::string(p)));
  return out;
}

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TOOLS_USER_PATH_H_
