#include "trainer/validation/validate_flags.h"

#include <functional>
#include <map>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpt_sft::trainer::validation {
namespace {

// The trainer flags each test sets for itself.
const char* const kSetPerTest[] = {"output_dir", "compile_cache_dir", "compile", "nocompile",
                                   "test_only_force_recompile"};

struct Arg {
  std::string name;
  std::optional<std::string> value;  // "--name=value"; none for "--name"
};

std::optional<Arg> SplitFlag(const std::string& arg) {
  if (arg.rfind("--", 0) != 0 || arg.size() == 2) return std::nullopt;
  const size_t eq = arg.find('=');
  if (eq == std::string::npos) return Arg{arg.substr(2), std::nullopt};
  return Arg{arg.substr(2, eq - 2), arg.substr(eq + 1)};
}

absl::Status Bool(const Arg& a, bool negated, bool& out) {
  if (!a.value) {
    out = !negated;
    return absl::OkStatus();
  }
  if (negated) return absl::InvalidArgumentError(absl::StrCat("--no", a.name, " takes no value"));
  if (*a.value == "true" || *a.value == "1") out = true;
  else if (*a.value == "false" || *a.value == "0") out = false;
  else return absl::InvalidArgumentError(absl::StrCat("--", a.name, "=", *a.value, " is not true or false"));
  return absl::OkStatus();
}

absl::Status String(const Arg& a, std::string& out) {
  if (!a.value || a.value->empty()) return absl::InvalidArgumentError(absl::StrCat("--", a.name, " needs =VALUE"));
  out = *a.value;
  return absl::OkStatus();
}

absl::Status Int(const Arg& a, int min, int& out) {
  if (!a.value || !absl::SimpleAtoi(*a.value, &out) || out < min) {
    return absl::InvalidArgumentError(absl::StrCat("--", a.name, "=", a.value.value_or(""),
                                                   " must be an integer >= ", min));
  }
  return absl::OkStatus();
}

absl::Status Double(const Arg& a, double& out) {
  if (!a.value || !absl::SimpleAtod(*a.value, &out) || out < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--", a.name, "=", a.value.value_or(""),
                                                   " must be a number of seconds >= 0"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ValidateUsage() {
  return R"(validate: the validation report, produced by the product.

  ./bazelw run //trainer:validate -- [validate flags] [trainer flags]

Runs the trainer (//trainer) as subprocesses on the same data, seed and flags: Test 1 eager
(--compile=false), Test 2 compiled (fresh compile cache: cold compile), Test 2b compiled for one
step with the same cache (warm start), Test 3 compiled on --nproc_per_node ranks. Writes
VALIDATION_REPORT.md, validation_report.json and PNG plots into the run dir, one folder per test
(metrics.jsonl, run_summary.json, checkpoint, trainer.log). Exit status 0 only when every test
passed, every correctness check passed and every criterion was measured (the optional PyTorch
eager baseline may go unmeasured).

The compiled tests run on the trainer's --device (cpu by default; --device=opencl puts every
kernel the compiler generates on the OpenCL device); the eager test runs the interpreter on the host.

Validate flags (every other flag goes to each trainer run, e.g. --max_iterations=100):
  --demo                        the embedded demo model (set up once under the base dir)
  --base_dir=DIR                nanochat's base dir (also passed to the trainer)
  --run_dir=DIR                 where the report goes; default <base_dir>/validation/<timestamp>
  --nproc_per_node=N            ranks of Test 3 (default 2)
  --warmup_steps=N              steps left out of time/step and tokens/sec (default 5)
  --strict_targets              a missed performance target also fails the exit status
  --test_only_plant_recompile   pass --test_only_force_recompile to the compiled tests
  --python=PATH                 python3 with matplotlib for the plots (default /usr/bin/python3)
  --test_timeout_s=S            stop a test that runs longer than S seconds (default: no limit)
  --git_commit=SHA              the commit to record (default: git rev-parse HEAD of the workspace)
  --quiet                       do not echo the trainers' output
  --torch_eager=auto|venv|none|PATH
                                the second eager baseline of the speedup target: PyTorch eager
                                running nanochat's model at Test 2's config (the bench's peer).
                                auto (default): the bench's pinned-torch venv if it exists, else
                                not measured; venv: make that venv now if missing (downloads torch);
                                none: not measured; PATH: that python. Not measured is stated in
                                the report and does not fail the exit status.
)";
}

absl::StatusOr<ValidateOptions> ParseValidateFlags(const std::vector<std::string>& args) {
  ValidateOptions o;
  o.argv = args;
  for (size_t i = 1; i < args.size(); ++i) {
    std::optional<Arg> a = SplitFlag(args[i]);
    if (!a) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", args[i],
                                                     "': flags only (--name=value); see --help"));
    }
    const bool negated = a->name.rfind("no", 0) == 0;
    const std::string base = negated ? a->name.substr(2) : a->name;
    absl::Status s = absl::OkStatus();
    if (a->name == "help") o.help = true;
    else if (base == "demo") s = Bool(*a, negated, o.demo);
    else if (base == "test_only_plant_recompile") s = Bool(*a, negated, o.plant_recompile);
    else if (base == "strict_targets") s = Bool(*a, negated, o.strict_targets);
    else if (base == "quiet") s = Bool(*a, negated, o.quiet);
    else if (a->name == "base_dir") s = String(*a, o.base_dir);
    else if (a->name == "run_dir") s = String(*a, o.run_dir);
    else if (a->name == "python") s = String(*a, o.python);
    else if (a->name == "git_commit") s = String(*a, o.git_commit);
    else if (a->name == "torch_eager") s = String(*a, o.torch_eager);
    else if (a->name == "nproc_per_node") s = Int(*a, 2, o.nproc_per_node);
    else if (a->name == "warmup_steps") s = Int(*a, 0, o.warmup_steps);
    else if (a->name == "test_timeout_s") s = Double(*a, o.test_timeout_s);
    else {
      for (const char* own : kSetPerTest) {
        if (a->name == own) {
          return absl::InvalidArgumentError(absl::StrCat("--", a->name,
                                                         " is set by validate for each test; leave it out"));
        }
      }
      o.trainer_flags.push_back(args[i]);
    }
    if (!s.ok()) return s;
  }
  return o;
}

}  // namespace gpt_sft::trainer::validation
