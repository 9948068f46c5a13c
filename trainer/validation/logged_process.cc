#include "trainer/validation/logged_process.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "trainer/bench/subprocess.h"

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

  const auto start = Clock::now();
  absl::StatusOr<bench::SpawnedChild> child = bench::SpawnWithPipes(argv, env);
  if (!child.ok()) return child.status();
  const pid_t pid = child->pid;
  Fd out_read{child->stdout_fd}, err_read{child->stderr_fd};

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
  absl::StatusOr<bench::ExitStatus> exit = bench::WaitForExit(pid, argv[0]);
  if (!exit.ok()) return exit.status();
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.exit_code = exit->exit_code;
  result.term_signal = exit->term_signal;
  result.stderr_tail = LastLines(result.stderr_tail, 40);
  result.log_tail = LastLines(log_tail, 40);
  if (!log) return absl::UnavailableError("cannot write the log file " + options.log_path);
  return result;
}

}  // namespace gpt_sft::trainer::validation
