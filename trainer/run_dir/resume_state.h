// ResumeState: what a run's step directory holds beyond the model and the optimizer state so
// that `--resume` continues the run exactly (train_state.json): the step (optimizer steps
// taken, the loop's next iteration), how many micro-batches this rank's training loader had
// produced (every rank produces the same number), the run's id (its metrics records keep it),
// the length metrics.jsonl had (a resumed run cuts off the records of steps after the save),
// and the run's shape: every value that changes what the steps compute, which a resumed run
// must keep (RunShape).
//
// Data position: the loader is a deterministic pipeline, so a resumed run regenerates and
// discards `micro_batches` batches rather than serializing the loader's internals (a few
// milliseconds per batch: the tokenizer renders the conversations again). RNG: no random
// numbers are drawn in training or evaluation (no dropout, greedy generation; the data order
// comes from --seed, part of the shape), so there is no RNG state to keep.
#ifndef GPT_SFT_TRAINER_RUN_DIR_RESUME_STATE_H_
#define GPT_SFT_TRAINER_RUN_DIR_RESUME_STATE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "model/model_config.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/params/param_store.h"
#include "trainer/optimizer_state.h"
#include "trainer/config/trainer_options.h"

namespace gpt_sft::trainer {

/// (name, value) pairs in a fixed order; values as text (doubles with 17 digits).
using RunShape = std::vector<std::pair<std::string, std::string>>;

/// The run's shape: the model's config, the batch ([B, T], examples per step, ranks, packing),
/// the numerics (dtype), the optimizer's settings (every lr, weight decay, init_lr_frac), the
/// data (seed, training rows) and the schedule (num_iterations, which sets the lr decay).
/// Free to change on resume: --compile, --device, --num_threads, every --eval_* flag,
/// --save_every, --verify_checkpoint.
RunShape RunShapeOf(const TrainerOptions& options, const compiler::ModelConfig& model, int64_t num_iterations,
                    int64_t training_rows);

struct ResumeState {
  int64_t step = 0;
  int64_t micro_batches = 0;
  int64_t run = 0;
  int64_t metrics_bytes = 0;
  RunShape shape;
};

/// OK when `now` equals `saved` key by key; else FailedPrecondition naming `step_dir`, the
/// first value that differs, and both values.
absl::Status CheckSameRun(const RunShape& saved, const RunShape& now, const std::string& step_dir);

/// Writes a step of the run into <run_dir>/step_%06d/ as one StepDirectory: the model and its
/// meta (runtime/checkpoint), optim_%06d.safetensors and train_state.json. A kill at any
/// instant leaves the step absent or complete. Returns the model's and meta's final paths.
absl::StatusOr<runtime::ResolvedCheckpoint> SaveRunStep(const std::string& run_dir, const runtime::ParamStore& params,
                                                        const runtime::CheckpointRecord& record,
                                                        const OptimizerState& optimizer, const ResumeState& resume);

struct LoadedRunStep {
  std::string dir;  // <run_dir>/step_%06d
  runtime::ParamStore params;
  runtime::CheckpointMeta meta;
  OptimizerState optimizer;
  ResumeState resume;
};

/// The largest step_<digits>/ of `run_dir` that holds a train_state.json, loaded and checked
/// (the model against its meta's checksum). NotFound naming the directory when it has none.
absl::StatusOr<LoadedRunStep> LoadLatestRunStep(const std::string& run_dir);

/// --resume: LoadLatestRunStep, then CheckSameRun against this run's shape `now`.
absl::StatusOr<LoadedRunStep> LoadStepToResume(const std::string& run_dir, const RunShape& now);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_RUN_DIR_RESUME_STATE_H_
