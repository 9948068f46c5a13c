#include "trainer/validation/logged_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace gpt_sft::trainer::validation {
namespace {

constexpr size_t kTailBytes = 4096;
constexpr double kKillGraceSeconds = 10;

using Clock = std::chrono::steady_clock;

struct Fd {
  int fd = -1;
  ~Fd() { Close(); }
  void Close() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

// Keeps the last kTailBytes of a stream.
void KeepTail(std::string& tail, const char* data, size_t n) {
  tail.append(data, n);
  if (tail.size() > 2 * kTailBytes) tail.erase(0, tail.size() - kTailBytes);
}

// Echoes whole lines with a prefix; a partial line waits for its end (or Flush).
class PrefixedEcho {
 public:
  PrefixedEcho(std::ostream* out, std::string prefix) : out_(out), prefix_(std::move(prefix)) {}
  void Write(const char* data, size_t n) {
    if (out_ == nullptr) return;
    pending_.append(data, n);
    size_t start = 0;
    for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
      *out_ << prefix_ << pending_.substr(start, nl + 1 - start);
    }
    pending_.erase(0, start);
    out_->flush();
  }
  void Flush() {
    if (out_ != nullptr && !pending_.empty()) *out_ << prefix_ << pending_ << "\n" << std::flush;
    pending_.clear();
  }

 private:
  std::ostream* out_;
  std::string prefix_, pending_;
};

}  // namespace

std::string LastLines(const std::string& text, int max_lines) {
  size_t end = text.size();
  while (end > 0 && text[end - 1] == '\n') --end;
  size_t start = end;
  for (int lines = 0; start > 0; --start) {
    if (text[start - 1] == '\n' && ++lines == max_lines) break;
  }
  return text.substr(start, end - start);
}

absl::StatusOr<LoggedRun> RunLogged(const std::vector<std::string>& argv,
                                    const std::map<std::string, std::string>& env, const LogOptions& options) {
  if (argv.empty()) return absl::InvalidArgumentError("RunLogged: empty argv");
  std::ofstream log(options.log_path, std::ios::binary | std::ios::trunc);
  if (!log) return absl::UnavailableError("cannot create the log file " + options.log_path);

  int out_fds[2], err_fds[2];
  if (pipe2(out_fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  Fd out_read{out_fds[0]}, out_write{out_fds[1]};
  if (pipe2(err_fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  Fd err_read{err_fds[0]}, err_write{err_fds[1]};

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
  posix_spawn_file_actions_adddup2(&actions, out_write.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_write.fd, STDERR_FILENO);
  const auto start = Clock::now();
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return absl::NotFoundError(absl::StrCat("cannot start ", argv[0], ": ", std::strerror(rc)));
  out_write.Close();  // else the reads below never see EOF
  err_write.Close();

  LoggedRun result;
  PrefixedEcho echo(options.console, options.console_prefix);
  std::string log_tail;
  pollfd fds[2] = {{out_read.fd, POLLIN, 0}, {err_read.fd, POLLIN, 0}};
  int open_streams = 2;
  bool term_sent = false, kill_sent = false;
  char buffer[65536];
  while (open_streams > 0) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (options.timeout_seconds > 0 && !term_sent && elapsed > options.timeout_seconds) {
      kill(pid, SIGTERM);
      term_sent = result.timed_out = true;
    }
    if (term_sent && !kill_sent && elapsed > options.timeout_seconds + kKillGraceSeconds) {
      kill(pid, SIGKILL);
      kill_sent = true;
    }
    const int ready = poll(fds, 2, options.timeout_seconds > 0 ? 1000 : -1);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        log.write(buffer, n);
        log.flush();
        echo.Write(buffer, static_cast<size_t>(n));
        KeepTail(log_tail, buffer, static_cast<size_t>(n));
        if (i == 1) KeepTail(result.stderr_tail, buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;  // poll skips negative fds
        --open_streams;
      }
    }
  }
  echo.Flush();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid ", argv[0], ": ", std::strerror(errno)));
  }
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  result.stderr_tail = LastLines(result.stderr_tail, 40);
  result.log_tail = LastLines(log_tail, 40);
  if (!log) return absl::UnavailableError("cannot write the log file " + options.log_path);
  return result;
}

}  // namespace gpt_sft::trainer::validation
