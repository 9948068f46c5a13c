// Runs a program to completion with a given environment and captures its stdout and stderr.
// Just enough process handling for the benchmark's peers; no shell is involved.
#ifndef GPT_SFT_TRAINER_BENCH_SUBPROCESS_H_
#define GPT_SFT_TRAINER_BENCH_SUBPROCESS_H_

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
