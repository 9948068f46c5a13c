#include "base/runfiles.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_join.h"

namespace gpt_sft::base {
namespace {

bool Readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

std::string ExecutablePath() {
  char buffer[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  return n > 0 ? std::string(buffer, n) : std::string();
}

}  // namespace

absl::StatusOr<std::string> FindRunfile(const std::string& path) {
  std::vector<std::string> roots;
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    if (const char* dir = std::getenv(var); dir != nullptr && *dir != '\0') roots.push_back(dir);
  }
  if (const std::string exe = ExecutablePath(); !exe.empty()) roots.push_back(exe + ".runfiles");
  std::vector<std::string> tried;
  for (const std::string& root : roots) {
    // External repositories sit beside the main workspace's gpt_sft/ in a runfiles tree.
    std::string external = path;
    if (path.rfind("external/", 0) == 0) external = path.substr(9);
    for (const std::string& candidate : {root + "/gpt_sft/" + path, root + "/" + external, root + "/" + path}) {
      tried.push_back(candidate);
      if (Readable(candidate)) return candidate;
    }
  }
  tried.push_back(path);  // `bazel run` starts in <runfiles>/gpt_sft
  if (Readable(path)) return path;
  return absl::NotFoundError("runfile " + path + " not found; tried: " + absl::StrJoin(tried, ", "));
}

}  // namespace gpt_sft::base
