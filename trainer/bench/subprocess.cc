#include "trainer/bench/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace gpt_sft::bench {
namespace {

// Both pipe ends of one stream; closes what is still open.
struct Pipe {
  int read_end = -1, write_end = -1;
  ~Pipe() {
    if (read_end >= 0) close(read_end);
    if (write_end >= 0) close(write_end);
  }
};

absl::Status OpenPipe(Pipe& p) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  p.read_end = fds[0];
  p.write_end = fds[1];
  return absl::OkStatus();
}

// Reads both pipes until both reach EOF; polling both keeps a child that fills one pipe while
// we block on the other from deadlocking.
void DrainBoth(int out_fd, int err_fd, std::string& out, std::string& err) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open_count = 2;
  char buf[65536];
  while (open_count > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;  // poll ignores negative fds
        --open_count;
      }
    }
  }
}

}  // namespace

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    env[std::string(*e, static_cast<size_t>(eq - *e))] = std::string(eq + 1);
  }
  return env;
}

absl::StatusOr<SpawnedChild> SpawnWithPipes(const std::vector<std::string>& argv,
                                            const std::map<std::string, std::string>& env) {
  if (argv.empty()) return absl::InvalidArgumentError("SpawnWithPipes: empty argv");
  Pipe out, err;
  if (absl::Status s = OpenPipe(out); !s.ok()) return s;
  if (absl::Status s = OpenPipe(err); !s.ok()) return s;

  std::vector<char*> c_argv;
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  std::vector<char*> c_env;
  for (std::string& e : env_strings) c_env.push_back(e.data());
  c_env.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write_end, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write_end, STDERR_FILENO);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return absl::NotFoundError(absl::StrCat("cannot start ", argv[0], ": ", std::strerror(rc)));

  // Our copies of the write ends close (in ~Pipe), or the caller's reads never see EOF; the
  // read ends go to the caller.
  SpawnedChild child;
  child.pid = pid;
  std::swap(child.stdout_fd, out.read_end);
  std::swap(child.stderr_fd, err.read_end);
  return child;
}

absl::StatusOr<ExitStatus> WaitForExit(pid_t pid, const std::string& name) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid ", name, ": ", std::strerror(errno)));
  }
  ExitStatus exit;
  if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.term_signal = WTERMSIG(status);
  return exit;
}

absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         const std::map<std::string, std::string>& env) {
  if (argv.empty()) return absl::InvalidArgumentError("RunProcess: empty argv");
  absl::StatusOr<SpawnedChild> child = SpawnWithPipes(argv, env);
  if (!child.ok()) return child.status();
  ProcessResult result;
  DrainBoth(child->stdout_fd, child->stderr_fd, result.stdout_text, result.stderr_text);
  close(child->stdout_fd);
  close(child->stderr_fd);
  absl::StatusOr<ExitStatus> exit = WaitForExit(child->pid, argv[0]);
  if (!exit.ok()) return exit.status();
  result.exit_code = exit->exit_code;
  result.term_signal = exit->term_signal;
  return result;
}

std::string Tail(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  size_t start = text.size() - max_chars;
  const size_t newline = text.find('\n', start);
  if (newline != std::string::npos && newline + 1 < text.size()) start = newline + 1;
  return text.substr(start);
}

}  // namespace gpt_sft::bench
