// TrainerOptions: the trainer's flags with nanochat's chat_sft meaning and defaults
// (NANOCHAT.md 6.1), spelled as the validation plan spells them, and their checks. Every
// check runs before any work, and each error names the flag at fault and what is allowed.
#ifndef GPT_SFT_TRAINER_CONFIG_TRAINER_OPTIONS_H_
#define GPT_SFT_TRAINER_CONFIG_TRAINER_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "data/pipeline/training_data.h"

namespace gpt_sft::trainer {

struct TrainerOptions {
  int max_iterations = -1;            // -1: one epoch of the training mixture
  std::string model_source = "base";  // base | mid: where the model to fine-tune is read
  std::optional<std::string> model_tag;  // e.g. "d20"; default: the largest depth
  std::optional<int64_t> step;           // default: the latest
  std::string init_from;       // a nanochat checkpoint dir or model_XXXXXX.pt instead (trainer/config/init_from.h)
  std::string init_tokenizer;  // its tokenizer.pkl; empty: found beside it (trainer/config/init_from.h)
  int device_batch_size = 4;
  int max_seq_len = 2048;
  int target_examples_per_step = 32;
  double unembedding_lr = 0.004, embedding_lr = 0.2, matrix_lr = 0.02;
  double weight_decay = 0.0;
  double init_lr_frac = 0.02;
  int eval_every = 100;
  int eval_steps = 100;
  int eval_metrics_every = 200;
  int eval_metrics_max_problems = 1024;
  std::string dtype = "float32";
  std::string base_dir;  // empty: $NANOCHAT_BASE_DIR or ~/.cache/nanochat
  bool compile = true;
  std::string device = "cpu";  // where the compiled step runs: cpu | opencl | opencl:<n>
  std::string packing = "bestfit";  // pad | bestfit (the default: 13-19x the supervised tokens/sec, //trainer:bench)
  int64_t seed = 42;
  // --jsonl, --val_jsonl, --builtin_tasks, --jsonl_repeat (data/pipeline/training_data.h);
  // the word list and the seed are filled in when the data is built.
  data::TrainingDataOptions data;
  int num_threads = 0;  // 0: every core (with several ranks on one machine: its share of them)
  int nproc_per_node = 1;  // ranks on this machine; > 1 relaunches the trainer through mpirun
  double collective_timeout_s = 300;  // how long a rank waits for the others in one collective
  std::string output_dir;             // empty: <base_dir>/chatsft_checkpoints/d<depth>
  std::string compile_cache_dir;      // empty: <base_dir>/compile_cache
  bool verify_checkpoint = true;      // reload the saved checkpoint: bit-exact, same validation loss
  int save_every = 0;                 // > 0: also save a step every N optimizer steps (0: at the end only)
  bool resume = false;                // continue from the output dir's latest step (trainer/run_dir/resume_state.h)
  bool overwrite = false;             // start afresh where another run is: move its files aside first
  // Test-only: compiles the step a second time at step 1, the fault a shape-polymorphic
  // trainer would hit; the recompilation counters and the validation report must show it.
  bool test_only_force_recompile = false;
  int world_size = 1;  // data-parallel ranks in the job (from the launcher, not a flag)
  int rank = 0;

  /// grad_accum_steps = target_examples_per_step / (device_batch_size * world_size).
  int GradAccumSteps() const { return target_examples_per_step / (device_batch_size * world_size); }
};

/// Every flag's range and the combinations: a device batch that does not divide the target
/// examples per step, an unknown --model_source / --packing / --dtype, ... The message names
/// the flag(s) and what is allowed.
absl::Status ValidateOptions(const TrainerOptions& options);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_CONFIG_TRAINER_OPTIONS_H_
