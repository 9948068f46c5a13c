#include "trainer/validation/validation_run.h"

#include <ctime>
#include <filesystem>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_file.h"
#include "base/json_file.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "trainer/bench/subprocess.h"
#include "trainer/config/demo_setup.h"
#include "base/runfiles.h"
#include "trainer/validation/criteria.h"
#include "trainer/validation/environment.h"
#include "trainer/validation/logged_process.h"
#include "trainer/validation/plots.h"
#include "trainer/validation/report_json.h"
#include "trainer/validation/report_markdown.h"
#include "trainer/validation/test_figures.h"
#include "trainer/validation/torch_eager_baseline.h"
#include "trainer/validation/trainer_outputs.h"

namespace gpt_sft::trainer::validation {
namespace {

namespace fs = std::filesystem;

// Test 2b: Test 2's flags for one optimizer step (nanochat's count: iterations = steps + 1),
// with the smallest evaluation, since only making the step is being measured.
const char* const kWarmStartFlags[] = {"--max_iterations=2", "--eval_steps=1", "--eval_metrics_max_problems=1"};

struct TestSpec {
  std::string id, folder, title;
  TestRole role;
  int world_size = 1;
  std::vector<std::string> flags;
};

std::vector<TestSpec> TestSpecs(int ranks) {
  std::vector<TestSpec> specs = {
      {"test1", "test1_eager", "Test 1: eager baseline", TestRole::kEager, 1, {"--compile=false", "--device=cpu"}},
      {"test2", "test2_compiled", "Test 2: compiled (cold compile)", TestRole::kCompiled, 1, {"--compile=true"}},
      {"test2b", "test2b_compiled_warm", "Test 2b: compiled, warm start", TestRole::kCompiledWarm, 1,
       {"--compile=true"}},
      {"test3", absl::StrCat("test3_compiled_", ranks, "ranks"), absl::StrCat("Test 3: compiled on ", ranks, " ranks"),
       TestRole::kCompiledRanks, ranks, {"--compile=true", absl::StrCat("--nproc_per_node=", ranks)}}};
  for (const char* f : kWarmStartFlags) specs[2].flags.push_back(f);
  return specs;
}

std::string LocalTime(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buffer[64];
  std::strftime(buffer, sizeof(buffer), format, &tm);
  return buffer;
}

absl::StatusOr<std::string> MakeRunDir(const ValidateOptions& o, const std::string& base_dir) {
  std::error_code ec;
  std::string dir = o.run_dir;
  if (dir.empty()) {
    const std::string stem = base_dir + "/validation/" + LocalTime("%Y%m%d-%H%M%S");
    dir = stem;
    for (int n = 2; fs::exists(dir, ec); ++n) dir = absl::StrCat(stem, "-", n);
  } else if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--run_dir=", dir, " is not empty: its tests' outputs would mix with an earlier run's; give a new folder"));
  }
  fs::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create the run dir ", dir, ": ", ec.message()));
  return fs::absolute(dir).lexically_normal().string();
}

// (commit, how it was found).
std::pair<std::string, std::string> GitCommit(const ValidateOptions& o) {
  if (!o.git_commit.empty()) return {o.git_commit, "given with --git_commit"};
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (workspace == nullptr || *workspace == '\0') {
    return {"unknown", "BUILD_WORKSPACE_DIRECTORY is unset (not started by `bazel run`); pass --git_commit=SHA"};
  }
  const std::map<std::string, std::string> env = bench::CurrentEnvironment();
  absl::StatusOr<bench::ProcessResult> head = bench::RunProcess({"/usr/bin/git", "-C", workspace, "rev-parse", "HEAD"}, env);
  if (!head.ok() || head->exit_code != 0) {
    return {"unknown", absl::StrCat("git rev-parse HEAD failed in ", workspace, ": ",
                                    head.ok() ? LastLines(head->stderr_text, 2) : std::string(head.status().message()))};
  }
  std::string commit = head->stdout_text;
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == ' ')) commit.pop_back();
  absl::StatusOr<bench::ProcessResult> status = bench::RunProcess(
      {"/usr/bin/git", "-C", workspace, "status", "--porcelain", "--untracked-files=no"}, env);
  const bool dirty = status.ok() && status->exit_code == 0 && !status->stdout_text.empty();
  return {commit, absl::StrCat("git rev-parse HEAD in ", workspace,
                               dirty ? "; the work tree has uncommitted changes to tracked files" : "; clean")};
}

// The value of the last --name=value in `flags`, or "".
std::string FlagValue(const std::vector<std::string>& flags, const std::string& name) {
  std::string value;
  const std::string prefix = "--" + name + "=";
  for (const std::string& f : flags) {
    if (f.rfind(prefix, 0) == 0) value = f.substr(prefix.size());
  }
  return value;
}

// The model_config of the first checkpoint a test saved (its meta_%06d.json beside the model).
base::Json ModelConfig(const std::vector<TestRun>& tests) {
  for (const TestRun& t : tests) {
    if (!t.summary || !t.summary->checkpoint) continue;
    fs::path model = t.summary->checkpoint->model_path;
    std::string name = model.filename().string();
    if (name.rfind("model_", 0) != 0) continue;
    name = "meta_" + name.substr(6);
    name = name.substr(0, name.rfind('.')) + ".json";
    absl::StatusOr<base::Json> meta = base::ReadJsonFile((model.parent_path() / name).string());
    if (meta.ok() && meta->is_object() && meta->contains("model_config")) return (*meta)["model_config"];
  }
  return nullptr;
}

class Validation {
 public:
  Validation(const ValidateOptions& o, std::ostream& console) : o_(o), console_(console) {}

  absl::StatusOr<int> Run() {
    if (absl::Status s = Prepare(); !s.ok()) return s;
    for (const TestSpec& spec : TestSpecs(o_.nproc_per_node)) {
      absl::StatusOr<TestRun> t = RunTest(spec);
      if (!t.ok()) return t.status();
      report_.tests.push_back(*std::move(t));
    }
    Judge();
    return WriteReport();
  }

 private:
  absl::Status Prepare() {
    absl::StatusOr<std::string> trainer = base::FindRunfile("trainer/trainer");
    if (!trainer.ok()) return trainer.status();
    trainer_ = fs::absolute(*trainer).string();
    base_dir_ = o_.base_dir;
    if (base_dir_.empty()) {
      absl::StatusOr<std::string> dir = runtime::NanochatBaseDir();
      if (!dir.ok()) return dir.status();
      base_dir_ = *dir;
    }
    base_dir_ = fs::absolute(base_dir_).lexically_normal().string();
    absl::StatusOr<std::string> run_dir = MakeRunDir(o_, base_dir_);
    if (!run_dir.ok()) return run_dir.status();
    report_.run_dir = *run_dir;
    cache_dir_ = report_.run_dir + "/compile_cache";
    report_.created = LocalTime("%Y-%m-%dT%H:%M:%S%z");
    report_.validate_command = o_.argv;
    std::tie(report_.git_commit, report_.git_note) = GitCommit(o_);
    RunConfig& c = report_.config;
    c.trainer_flags = o_.trainer_flags;
    c.demo = o_.demo;
    c.nproc_per_node = o_.nproc_per_node;
    c.warmup_steps = o_.warmup_steps;
    c.planted_recompile = o_.plant_recompile;
    c.base_dir = base_dir_;
    c.compile_cache_dir = cache_dir_;
    const std::string dtype = FlagValue(o_.trainer_flags, "dtype");
    c.dtype = dtype.empty() ? "float32 (the trainer's default)" : dtype;
    console_ << "validate: run dir " << report_.run_dir << "\nvalidate: trainer " << trainer_ << std::endl;
    if (o_.demo) {
      // Once, here: the tests then find the demo model and never create it concurrently.
      if (absl::Status s = EnsureDemoModel(base_dir_, console_); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  std::vector<std::string> Command(const TestSpec& spec) const {
    std::vector<std::string> argv = {trainer_};
    if (o_.demo) argv.push_back("--demo");
    argv.push_back("--base_dir=" + base_dir_);
    argv.insert(argv.end(), o_.trainer_flags.begin(), o_.trainer_flags.end());
    argv.insert(argv.end(), spec.flags.begin(), spec.flags.end());  // later flags win
    argv.push_back("--output_dir=" + report_.run_dir + "/" + spec.folder);
    argv.push_back("--compile_cache_dir=" + cache_dir_);
    if (o_.plant_recompile && spec.role != TestRole::kEager) argv.push_back("--test_only_force_recompile");
    return argv;
  }

  absl::StatusOr<TestRun> RunTest(const TestSpec& spec) {
    TestRun t;
    t.id = spec.id;
    t.title = spec.title;
    t.role = spec.role;
    t.world_size = spec.world_size;
    t.command = Command(spec);
    t.output_dir = report_.run_dir + "/" + spec.folder;
    t.log_path = t.output_dir + "/trainer.log";
    std::error_code ec;
    fs::create_directories(t.output_dir, ec);
    if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", t.output_dir, ": ", ec.message()));
    console_ << "\n=== " << t.title << " ===\n$ " << ShellLine(t.command) << std::endl;
    LogOptions log{t.log_path, "[" + t.id + "] ", o_.quiet ? nullptr : &console_, o_.test_timeout_s};
    absl::StatusOr<LoggedRun> run = RunLogged(t.command, bench::CurrentEnvironment(), log);
    if (!run.ok()) {
      t.failures.push_back(std::string(run.status().message()));
      console_ << "validate: " << t.id << " could not run: " << run.status().message() << std::endl;
      return t;
    }
    t.ran = true;
    t.exit_code = run->exit_code;
    t.term_signal = run->term_signal;
    t.wall_seconds = run->wall_seconds;
    tails_[t.id] = run->stderr_tail.empty() ? run->log_tail : run->stderr_tail;
    if (run->timed_out) t.failures.push_back(absl::StrFormat("stopped after --test_timeout_s=%g s", o_.test_timeout_s));
    ReadOutputs(t);
    JudgeTest(t, spec.world_size);
    console_ << "validate: " << t.id << (t.passed() ? " finished" : " FAILED") << absl::StrFormat(" in %.1f s", t.wall_seconds)
             << (t.failures.empty() ? "" : ": " + t.failures.front()) << std::endl;
    return t;
  }

  void ReadOutputs(TestRun& t) {
    const std::string metrics = t.output_dir + "/metrics.jsonl";
    std::error_code ec;
    if (fs::exists(metrics, ec)) {
      absl::StatusOr<std::vector<StepMetrics>> steps = ReadMetricsJsonl(metrics);
      if (steps.ok()) t.steps = *std::move(steps);
      else t.failures.push_back(std::string(steps.status().message()));
    }
    absl::StatusOr<RunSummary> summary = ReadRunSummary(t.output_dir + "/run_summary.json");
    if (summary.ok()) t.summary = *std::move(summary);
    else if (summary.status().code() != absl::StatusCode::kNotFound) t.failures.push_back(std::string(summary.status().message()));
    if (t.summary && t.summary->checkpoint && !fs::exists(t.summary->checkpoint->model_path, ec)) {
      t.failures.push_back("the checkpoint " + t.summary->checkpoint->model_path + " it names does not exist");
    }
    t.figures = ComputeFigures(t.steps, t.summary, o_.warmup_steps);
  }

  void Judge() {
    report_.config.model_config = ModelConfig(report_.tests);
    TorchEagerRequest torch;
    torch.python_flag = o_.torch_eager;
    report_.torch_eager = MeasureTorchEager(torch, report_.config.model_config, report_.Find(TestRole::kCompiled),
                                            report_.config.dtype, console_);
    report_.criteria = EvaluateCriteria(report_.tests, report_.config.thresholds, report_.torch_eager);
    ChargeFailures(report_.criteria, report_.tests);
    for (TestRun& t : report_.tests) {
      // The end of stderr explains a crash or an early exit; a run that finished and failed a
      // criterion is explained by the criterion.
      const bool ended_badly = !t.ran || t.exit_code != 0 || t.term_signal != 0 || !t.summary;
      if (!t.passed() && ended_badly) t.error_tail = tails_[t.id];
    }
    report_.exit_code = ExitCode(report_.tests, report_.criteria, o_.strict_targets);
    report_.verdict = Verdict(report_.tests, report_.criteria, o_.strict_targets);
    report_.environment = CollectEnvironment();
    for (TestRole role : {TestRole::kCompiled, TestRole::kCompiledWarm, TestRole::kCompiledRanks}) {
      const TestRun* t = report_.Find(role);
      if (t == nullptr || !t->figures.artifact_key) continue;
      report_.environment.gptc_version = CompilerVersionFromCache(cache_dir_, *t->figures.artifact_key);
      if (!report_.environment.gptc_version.empty()) break;
    }
  }

  absl::StatusOr<int> WriteReport() {
    const std::string json_path = report_.run_dir + "/" + kReportJson;
    const std::string md_path = report_.run_dir + "/" + kReportMarkdown;
    report_.plots.error = "not drawn (the plots are drawn from this file once it is written)";
    if (absl::Status s = base::WriteFileAtomically(json_path, ReportToJson(report_).dump(2) + "\n"); !s.ok()) return s;
    std::string script_error;
    const std::string script = FindPlotScript(script_error);
    report_.plots = script.empty() ? PlotSet{false, {}, script_error}
                                   : MakePlots(o_.python, script, json_path, report_.run_dir);
    if (!report_.plots.made) console_ << "validate: error: no plots: " << report_.plots.error << std::endl;
    if (absl::Status s = base::WriteFileAtomically(json_path, ReportToJson(report_).dump(2) + "\n"); !s.ok()) return s;
    if (absl::Status s = base::WriteFileAtomically(md_path, RenderMarkdown(report_)); !s.ok()) return s;
    console_ << "\n";
    for (const Criterion& c : report_.criteria) {
      console_ << (c.status == CriterionStatus::kPass ? "  ✅ " : "  ❌ ") << c.title << ": " << c.measured << "\n";
    }
    console_ << "\nvalidate: " << report_.verdict << "\nvalidate: report " << md_path << "\nvalidate: data   "
             << json_path << std::endl;
    return report_.exit_code;
  }

  const ValidateOptions& o_;
  std::ostream& console_;
  std::string trainer_, base_dir_, cache_dir_;
  std::map<std::string, std::string> tails_;  // test id -> the end of its stderr (or log)
  ValidationReport report_;
};

}  // namespace

absl::StatusOr<int> RunValidation(const ValidateOptions& options, std::ostream& console) {
  return Validation(options, console).Run();
}

}  // namespace gpt_sft::trainer::validation
