// Runs a program with a given environment, its stdout and stderr on pipes; no shell is
// involved. RunProcess captures both to completion (the benchmark's peers); SpawnWithPipes and
// WaitForExit are the two halves for callers that read the pipes themselves (the validation
// driver streams them into a log, with a timeout).
#ifndef GPT_SFT_TRAINER_BENCH_SUBPROCESS_H_
#define GPT_SFT_TRAINER_BENCH_SUBPROCESS_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpt_sft::bench {

struct ProcessResult {
  int exit_code = -1;    ///< the exit status, or -1 if a signal ended the process
  int term_signal = 0;   ///< the signal that ended it, or 0
  std::string stdout_text;
  std::string stderr_text;
};

/// A started child: its pid and the read ends of its stdout and stderr (the caller's to close).
struct SpawnedChild {
  pid_t pid = -1;
  int stdout_fd = -1, stderr_fd = -1;
};

/// Spawns argv[0] (an absolute path; no PATH search) with argv and exactly `env`, stdin
/// /dev/null. Fails only if it cannot be started (naming argv[0] and errno).
absl::StatusOr<SpawnedChild> SpawnWithPipes(const std::vector<std::string>& argv,
                                            const std::map<std::string, std::string>& env);

/// Waits for `pid` to end: exit_code and term_signal as in ProcessResult. `name` is for errors.
struct ExitStatus {
  int exit_code = -1;
  int term_signal = 0;
};
absl::StatusOr<ExitStatus> WaitForExit(pid_t pid, const std::string& name);

/// The environment of this process as name -> value.
std::map<std::string, std::string> CurrentEnvironment();

/// Spawns argv[0] (an absolute path; no PATH search) with argv and exactly `env`, waits for it
/// and returns what it wrote. Fails only if it cannot be started (naming argv[0] and errno).
absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         const std::map<std::string, std::string>& env);

/// The last `max_chars` characters of `text`, cut at a line start when one is in reach.
std::string Tail(const std::string& text, size_t max_chars);

}  // namespace gpt_sft::bench

#endif  // GPT_SFT_TRAINER_BENCH_SUBPROCESS_H_
