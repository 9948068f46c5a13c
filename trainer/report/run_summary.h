// RunSummary: what one trainer run measured, written at its end as <output_dir>/run_summary.json
// (atomically: a reader sees a whole summary or none). The validation report (//trainer:validate)
// reads it beside metrics.jsonl instead of scraping the log.
#ifndef GPT_SFT_TRAINER_REPORT_RUN_SUMMARY_H_
#define GPT_SFT_TRAINER_REPORT_RUN_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace gpt_sft::trainer {

struct CompileSummary {
  bool cache_hit = false;
  double seconds = 0;          // getting the executable in this run (compile or cache load)
  double compile_seconds = 0;  // of the compilation that made the artifact
  std::string key;             // the artifact cache key
  int64_t arena_bytes = 0;
};

struct CheckpointSummary {
  std::string model_path;
  int64_t step = 0;
  bool verified = false;          // the reload below ran
  bool reload_bit_exact = false;  // every tensor's bytes equal the trained ParamStore's
  std::string mismatch;           // the first tensor that differed, when not
  double val_loss_saved = 0, val_loss_reloaded = 0;
};

struct RunSummary {
  std::string mode;  // "compiled" | "eager"
  std::string device;  // where the training step ran: the --device of a compiled run
  int world_size = 1;
  std::string backend;  // the collectives': "single" or "mpi"
  int num_threads = 0;  // per rank
  int64_t batch_size = 0, seq_len = 0;
  std::string packing;
  int64_t steps_trained = 0;
  double first_loss = 0, final_loss = 0, final_loss_mean = 0;
  std::optional<double> val_loss;
  std::optional<CompileSummary> compile;  // absent for eager runs
  int64_t recompilations_training = 0;
  int64_t recompilations_evaluation = 0;  // evaluation runs on the interpreter: nothing compiles
  int64_t peak_rss_bytes = 0;             // the largest over the ranks
  double tokens_per_second = 0, supervised_tokens_per_second = 0, seconds_per_step = 0;  // warm-up excluded
  int measured_steps = 0;
  CheckpointSummary checkpoint;
};

/// Writes `summary` as JSON to `path` (temp file + fsync + rename). Errors name the file.
absl::Status WriteRunSummary(const RunSummary& summary, const std::string& path);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_REPORT_RUN_SUMMARY_H_
