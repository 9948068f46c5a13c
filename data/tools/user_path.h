// Paths given on the command line are relative to where the user ran `bazel run`, not to
// the runfiles directory Bazel starts the binary in.
#ifndef GPT_SFT_DATA_TOOLS_USER_PATH_H_
#define GPT_SFT_DATA_TOOLS_USER_PATH_H_

#include <cstdlib>
#include <string>

namespace gpt_sft::data {

inline std::string UserPath(const std::string& path) {
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || wd == nullptr || *wd == '\0') return path;
  return std::string(wd) + "/" + path;
}

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TOOLS_USER_PATH_H_
