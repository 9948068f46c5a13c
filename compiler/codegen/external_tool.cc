// Implements ScratchDir and RunTool (posix_spawn; stderr captured through a file in the
// scratch directory, so a chatty tool cannot block on a full pipe).
#include "compiler/codegen/external_tool.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

extern char** environ;

namespace gpt_sft::compiler {

absl::StatusOr<ScratchDir> ScratchDir::Make(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/", prefix, ".XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot make a temporary directory ", pattern, ": ", std::strerror(errno)));
  }
  return ScratchDir(pattern);
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

absl::Status WriteWholeFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status RunTool(const std::vector<std::string>& argv, const std::string& package, std::string* stderr_text) {
  const std::string& tool = argv.at(0);
  if (::access(tool.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(tool, " is not installed (Debian package ", package,
                                                      "; ./bazelw installs it)"));
  }
  absl::StatusOr<ScratchDir> dir = ScratchDir::Make("gpt-tool");
  if (!dir.ok()) return dir.status();
  const std::string err_path = dir->File("stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, tool.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return absl::InternalError(absl::StrCat("cannot start ", tool, ": ", std::strerror(spawned)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waiting for ", tool, ": ", std::strerror(errno)));
  }
  std::string err = ReadWholeFile(err_path).value_or("");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    if (stderr_text != nullptr) *stderr_text = std::move(err);
    return absl::OkStatus();
  }
  if (err.size() > 4000) err = "..." + err.substr(err.size() - 4000);
  const std::string how = WIFEXITED(status) ? absl::StrCat("exited with status ", WEXITSTATUS(status))
                                            : absl::StrCat("was killed by signal ", WTERMSIG(status));
  return absl::InternalError(absl::StrCat(absl::StrJoin(argv, " "), " ", how, ":\n", err));
}

}  // namespace gpt_sft::compiler
