// What one trainer run leaves in its --output_dir, as the validation driver reads it:
// metrics.jsonl (trainer/report/metrics_log.h, one record per optimizer step) and run_summary.json
// (written atomically by a run that finished). A field an older trainer does not write is
// nullopt here, so the report can say "not measured" instead of inventing a 0.
#ifndef GPT_SFT_TRAINER_VALIDATION_TRAINER_OUTPUTS_H_
#define GPT_SFT_TRAINER_VALIDATION_TRAINER_OUTPUTS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/json_file.h"

namespace gpt_sft::trainer::validation {

using BatchShape = std::array<int64_t, 2>;  // [B, T]

/// One metrics.jsonl record (one optimizer step).
struct StepMetrics {
  int64_t step = 0;
  double loss = 0;                    // the last micro-batch's, on rank 0 (nanochat's log line)
  std::optional<double> loss_mean;    // over every micro-batch of every rank
  double step_seconds = 0;
  double tokens_per_second = 0;
  double supervised_tokens_per_second = 0;
  int64_t tokens = 0, supervised_tokens = 0;
  int64_t peak_rss_bytes = 0;
  std::vector<BatchShape> batch_shapes;  // distinct micro-batch shapes of the step
  std::optional<int> world_size;
  std::optional<std::string> mode;       // "compiled" | "eager"
  std::optional<int64_t> recompilations;  // cumulative

  bool operator==(const StepMetrics& o) const;
};

struct CompileSummary {
  bool cache_hit = false;
  double seconds = 0;          // what making the step took in this run (compile or cache load)
  double compile_seconds = 0;  // what compiling it took, in this run or the one that cached it
  std::string key;             // the artifact's cache key
  int64_t arena_bytes = 0;

  bool operator==(const CompileSummary& o) const;
};

struct CheckpointSummary {
  std::string model_path;
  int64_t step = 0;
  std::optional<bool> verified;  // the trainer reloaded it (false with --verify_checkpoint=false)
  bool reload_bit_exact = false;
  std::string mismatch;          // the first tensor that differed, when not bit-exact
  std::optional<double> val_loss_saved, val_loss_reloaded;

  bool operator==(const CheckpointSummary& o) const;
};

/// run_summary.json.
struct RunSummary {
  std::string mode;
  int world_size = 1;
  std::optional<std::string> backend;  // the collectives': "single" or "mpi"
  std::optional<std::string> device;   // where the training step ran (--device; eager: the host)
  std::optional<int> num_threads;      // per rank
  std::optional<BatchShape> batch_shape;  // the static [B, T] the run was configured with
  std::optional<std::string> packing;
  int64_t steps_trained = 0;
  std::optional<double> first_loss, final_loss, final_loss_mean, val_loss;
  std::optional<CompileSummary> compile;  // absent for eager runs
  std::optional<int64_t> recompilations_training, recompilations_evaluation;
  std::optional<int64_t> peak_rss_bytes;  // max over ranks
  std::optional<double> tokens_per_second, seconds_per_step;
  std::optional<CheckpointSummary> checkpoint;

  bool operator==(const RunSummary& o) const;
};

/// Every record of `path`, in file order. A line that is not a JSON object with the base
/// fields (step, loss, step_seconds, ...) is DataLoss naming path:line and the field.
absl::StatusOr<std::vector<StepMetrics>> ReadMetricsJsonl(const std::string& path);
absl::StatusOr<StepMetrics> ParseStepMetrics(const std::string& line, const std::string& where);

/// NotFound when the file is missing (the run did not finish); DataLoss naming the file and
/// field when it is malformed.
absl::StatusOr<RunSummary> ReadRunSummary(const std::string& path);
absl::StatusOr<RunSummary> ParseRunSummary(const std::string& text, const std::string& where);

/// The same fields as the trainer writes them; Parse*(ToJson(x)) == x. The report embeds them.
base::Json ToJson(const StepMetrics& m);
base::Json ToJson(const RunSummary& s);
absl::StatusOr<StepMetrics> StepMetricsFromJson(const base::Json& j, const std::string& where);
absl::StatusOr<RunSummary> RunSummaryFromJson(const base::Json& j, const std::string& where);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_TRAINER_OUTPUTS_H_
