// Finding a file the binary carries as Bazel runfiles (the word list, the English prose the
// demo trains its tokenizer on), whether started by `bazel run`, by `bazel test` or directly
// from bazel-bin (every room's tools need it, so it lives here).
#ifndef GPT_SFT_BASE_RUNFILES_H_
#define GPT_SFT_BASE_RUNFILES_H_

#include <string>

#include "absl/status/statusor.h"

namespace gpt_sft::base {

/// `path` is relative to the runfiles root, e.g. "external/wordlist/words" or
/// "gpt_sft/trainer/x". Tries $RUNFILES_DIR, $TEST_SRCDIR, /proc/self/exe.runfiles (each with
/// and without the workspace name gpt_sft/), then the working directory. NotFound lists them.
absl::StatusOr<std::string> FindRunfile(const std::string& path);

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_RUNFILES_H_
