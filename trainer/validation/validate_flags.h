// The command line of `//trainer:validate`: its own flags (below), and every other flag passed
// through, unchanged and in order, to each of the trainer runs (--max_iterations=100,
// --model_tag=d20, ...). The trainer rejects what it does not know, before any work, and the
// first test's log says so. The flags that validate sets per test are refused here.
#ifndef GPT_SFT_TRAINER_VALIDATION_VALIDATE_FLAGS_H_
#define GPT_SFT_TRAINER_VALIDATION_VALIDATE_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpt_sft::trainer::validation {

struct ValidateOptions {
  std::vector<std::string> trainer_flags;  // passed through to every test
  std::string base_dir;   // --base_dir (also the trainer's); empty: $NANOCHAT_BASE_DIR or ~/.cache/nanochat
  std::string run_dir;    // --run_dir; empty: <base_dir>/validation/<YYYYmmdd-HHMMSS>
  bool demo = false;      // --demo: set the demo up once, then every test runs with --demo
  int nproc_per_node = 2;  // --nproc_per_node: ranks of Test 3
  int warmup_steps = 5;    // --warmup_steps: steps left out of time/step and tokens/sec
  bool plant_recompile = false;  // --test_only_plant_recompile
  bool strict_targets = false;   // --strict_targets: a missed performance target fails the exit status
  std::string python = "/usr/bin/python3";  // --python: the interpreter that draws the plots
  double test_timeout_s = 0;     // --test_timeout_s: > 0 stops a test that runs longer
  std::string git_commit;        // --git_commit: overrides what git says
  bool quiet = false;            // --quiet: no echo of the trainers' output on the console
  std::string torch_eager = "auto";  // --torch_eager: auto, venv, none or a python (torch_eager_baseline.h)
  bool help = false;             // --help
  std::vector<std::string> argv;  // the command line as given, for the report
};

/// Usage text for --help.
std::string ValidateUsage();

/// InvalidArgument naming the flag for a bad value, a positional argument, or a flag validate
/// sets itself (--output_dir, --compile_cache_dir, --compile, --test_only_force_recompile).
absl::StatusOr<ValidateOptions> ParseValidateFlags(const std::vector<std::string>& args);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_VALIDATE_FLAGS_H_
