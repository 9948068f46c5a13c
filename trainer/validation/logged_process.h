// Runs one test's trainer as a child process (posix_spawn, no shell) and keeps what it says:
// stdout and stderr go, in the order they arrive, to the test's log file and, line by line
// with a prefix such as "[test2] ", to the console, so a long validation shows its progress;
// the end of stderr is kept for the report when the test fails.
#ifndef GPT_SFT_TRAINER_VALIDATION_LOGGED_PROCESS_H_
#define GPT_SFT_TRAINER_VALIDATION_LOGGED_PROCESS_H_

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpt_sft::trainer::validation {

struct LoggedRun {
  int exit_code = -1;   // the exit status, or -1 when a signal ended it
  int term_signal = 0;  // the signal that ended it, or 0
  bool timed_out = false;
  double wall_seconds = 0;
  std::string stderr_tail;  // the last lines of its stderr (at most ~4 KB)
  std::string log_tail;     // the last lines of stdout and stderr together
};

struct LogOptions {
  std::string log_path;        // created (truncated); its folder must exist
  std::string console_prefix;  // e.g. "[test1] "
  std::ostream* console = nullptr;  // nullptr: no echo
  double timeout_seconds = 0;  // > 0: SIGTERM after this long, SIGKILL 10 s later
};

/// Runs argv[0] (an absolute path) with `argv` and exactly `env`, stdin from /dev/null. Fails
/// only when it cannot be started or the log cannot be written (naming the program or file).
absl::StatusOr<LoggedRun> RunLogged(const std::vector<std::string>& argv,
                                    const std::map<std::string, std::string>& env, const LogOptions& options);

/// The last `max_lines` lines of `text` (all of it when shorter).
std::string LastLines(const std::string& text, int max_lines);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_LOGGED_PROCESS_H_
