// ValidationReport: everything `//trainer:validate` measured and decided, the one data model
// behind VALIDATION_REPORT.md and validation_report.json (report_json.h turns it into JSON and
// back, report_markdown.h into the document). Figures that were not measured are nullopt and
// show as "not measured"; nothing here is filled with a default that looks like a result.
#ifndef GPT_SFT_TRAINER_VALIDATION_VALIDATION_REPORT_H_
#define GPT_SFT_TRAINER_VALIDATION_VALIDATION_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/json_file.h"
#include "trainer/validation/spread.h"
#include "trainer/validation/trainer_outputs.h"

namespace gpt_sft::trainer::validation {

/// What a test is for; the criteria look tests up by role.
enum class TestRole {
  kEager,          // Test 1: the interpreter (--compile=false), the baseline
  kCompiled,       // Test 2: the compiled step, cold (a fresh compile cache)
  kCompiledWarm,   // Test 2b: Test 2's config again for one step, same cache: the warm start
  kCompiledRanks,  // Test 3: the compiled step on N ranks (--nproc_per_node=N)
};
const char* RoleName(TestRole role);  // "eager", "compiled", "compiled_warm", "compiled_ranks"
std::optional<TestRole> RoleFromName(const std::string& name);

/// The figures of one test, from its metrics.jsonl and run_summary.json (test_figures.h).
struct TestFigures {
  int steps = 0;           // metrics records
  int measured_steps = 0;  // records past the warm-up steps
  std::vector<BatchShape> batch_shapes;  // distinct micro-batch shapes over every step
  std::optional<Spread> seconds_per_step, tokens_per_second, supervised_tokens_per_second;
  std::optional<double> first_loss, final_loss, final_loss_mean, val_loss;
  std::optional<bool> cache_hit;
  std::optional<double> compile_seconds;  // making the step in this run (a compile, or a cache load)
  std::optional<std::string> artifact_key;
  std::optional<int64_t> recompilations_training, recompilations_evaluation;
  std::optional<int64_t> peak_rss_bytes;  // max over ranks

  bool operator==(const TestFigures& o) const;
};

struct TestRun {
  std::string id;     // "test1", "test2", "test2b", "test3": also its output folder's prefix
  std::string title;  // e.g. "Test 2: compiled (cold compile)"
  TestRole role = TestRole::kEager;
  int world_size = 1;
  std::vector<std::string> command;  // the trainer's argv, exactly as run
  std::string output_dir;            // --output_dir: checkpoint, metrics.jsonl, run_summary.json
  std::string log_path;              // the trainer's stdout and stderr, interleaved as written

  bool ran = false;  // started at all
  int exit_code = -1;
  int term_signal = 0;
  double wall_seconds = 0;
  std::vector<std::string> failures;  // why the test failed; empty: it passed
  std::string error_tail;             // the last lines of its stderr (or log) when it failed
  std::vector<StepMetrics> steps;
  std::optional<RunSummary> summary;
  TestFigures figures;

  bool passed() const { return ran && failures.empty(); }
  bool operator==(const TestRun& o) const;
};

/// A correctness criterion failing makes validate exit non-zero; a performance target
/// missed is crossed in the report, and fails the exit status only under --strict_targets.
enum class CriterionKind { kCorrectness, kTarget };
enum class CriterionStatus { kPass, kFail, kNotMeasured };
const char* KindName(CriterionKind kind);        // "correctness", "target"
const char* StatusName(CriterionStatus status);  // "pass", "fail", "not_measured"

struct Criterion {
  std::string id;         // e.g. "speedup"
  std::string title;      // e.g. "Compiled step at least 1.3x faster than eager"
  CriterionKind kind = CriterionKind::kCorrectness;
  std::string threshold;  // the rule, e.g. "eager median time/step / compiled >= 1.30"
  CriterionStatus status = CriterionStatus::kNotMeasured;
  std::optional<double> value;  // the measured figure the rule compares, when there is one
  std::string measured;         // the measurement in words, or why it is missing
  std::vector<std::string> tests;  // ids of the tests it judges (a failure is theirs too)
  // Needs software a machine may lack (PyTorch): not measured, it is still crossed and listed
  // as not measured, but does not fail the exit status. Measured, it counts like any other.
  bool optional = false;

  bool operator==(const Criterion& o) const;
};

/// The limits the criteria apply; the report prints them beside each criterion.
struct Thresholds {
  double min_speedup = 1.3;             // eager time/step / compiled time/step
  double max_compile_seconds = 60;      // cold compile of the step
  double max_memory_ratio = 1.10;       // compiled peak RSS / eager peak RSS
  double max_final_loss_rel_diff = 0.05;  // compiled vs eager, loss at the last step
  // N ranks vs one rank (both compiled), relative: the per-step mean loss over all
  // micro-batches, and the final validation loss. Not bit-equal: each rank packs its own shard.
  double max_ranks_step_loss_rel_diff = 0.05;
  double max_ranks_val_loss_rel_diff = 0.03;  // as //tests:trainer_data_parallel_e2e_test allows

  bool operator==(const Thresholds& o) const;
};

struct Environment {
  std::string hostname;
  std::string cpu_model;   // /proc/cpuinfo "model name"
  int cpu_cores = 0;       // online logical CPUs
  int cpus_usable = 0;     // in this process's affinity mask
  std::string gpu;         // "none", or the devices found
  std::string os;          // /etc/os-release PRETTY_NAME and the kernel
  std::string cxx_compiler;  // the compiler that built validate (and the trainer): __VERSION__
  std::string gptc_version;  // the step compiler's version (from the compile cache manifest)
  std::vector<std::pair<std::string, std::string>> packages;  // Debian package -> version

  bool operator==(const Environment& o) const;
};

struct RunConfig {
  std::vector<std::string> trainer_flags;  // passed through to every test
  bool demo = false;
  int nproc_per_node = 2;
  int warmup_steps = 5;  // steps excluded from time/step and tokens/sec
  bool planted_recompile = false;  // --test_only_plant_recompile
  std::string base_dir;
  std::string compile_cache_dir;
  std::string dtype;
  base::Json model_config;  // the checkpoint meta's model_config (null when no test saved one)
  Thresholds thresholds;

  bool operator==(const RunConfig& o) const;
};

struct PlotSet {
  bool made = false;
  std::vector<std::pair<std::string, std::string>> files;  // title -> file name in the run dir
  std::string error;  // why there are none (python3 or matplotlib missing, the script failed)

  bool operator==(const PlotSet& o) const;
};

/// PyTorch eager running nanochat's model (trainer/bench/pytorch_peer.py) at the tests' model
/// config, micro-batch shape, micro-batches per step, threads and dtype: the second eager
/// baseline of the speedup, beside our interpreter (Test 1). Measured only where a torch can
/// run; otherwise `why_not` says why, and its criterion is not measured (never passed).
struct TorchEagerBaseline {
  bool measured = false;
  std::string why_not;  // when not measured
  std::string python, source, torch_version, dtype, attention, kernels;
  std::vector<std::string> command;  // the peer's argv
  int batch = 0, seq = 0, grad_accum = 1, threads = 0, warmup = 0, steps = 0;
  std::optional<double> seconds_per_step;  // median of the timed optimizer steps
  std::optional<int64_t> peak_rss_bytes;

  bool operator==(const TorchEagerBaseline& o) const;
};

struct ValidationReport {
  std::string created;  // local time, ISO 8601
  std::string run_dir;
  std::vector<std::string> validate_command;
  std::string git_commit;  // "unknown" when it could not be read
  std::string git_note;    // how it was read, or why it is unknown
  Environment environment;
  RunConfig config;
  std::vector<TestRun> tests;
  TorchEagerBaseline torch_eager;
  std::vector<Criterion> criteria;
  PlotSet plots;
  int exit_code = 1;
  std::string verdict;  // one line: what passed, what failed

  const TestRun* Find(TestRole role) const;
  bool operator==(const ValidationReport& o) const;
};

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_VALIDATION_REPORT_H_
