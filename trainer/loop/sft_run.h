// RunSft: nanochat's chat SFT loop (NANOCHAT.md 6.4-6.7) on the interpreted path: load the
// base model and tokenizer, build the training and validation mixtures, then for each step
// evaluate when due, accumulate gradients over the micro-batches, step the optimizers with
// the linear lr decay, log nanochat's lines and our validation instrumentation, append a
// metrics record, and save the checkpoint at the end (also every --save_every steps, and when a
// stop signal arrives: trainer/launch/stop_signal.h) as a step directory of the locked run directory
// (trainer/run_dir/run_directory.h, trainer/run_dir/resume_state.h); --resume continues from the latest one
// exactly. Rank 0 logs and saves.
#ifndef GPT_SFT_TRAINER_LOOP_SFT_RUN_H_
#define GPT_SFT_TRAINER_LOOP_SFT_RUN_H_

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/collectives/communicator.h"
#include "trainer/config/trainer_options.h"

namespace gpt_sft::trainer {

struct SftResult {
  int64_t steps_trained = 0;
  double first_loss = 0, final_loss = 0;
  double val_loss = 0;
  std::string checkpoint_dir;  // where the final checkpoint went
  int64_t checkpoint_step = 0;
  int64_t recompilations = 0;  // compilations after the compiled step was made (expected 0)
  int stopped_by_signal = 0;   // SIGINT/SIGTERM: the run saved its step and stopped early
};

/// `options` must have passed ValidateOptions, with rank and world_size those of `world` (a
/// world of one rank, or the data-parallel ranks: each trains on its shard of every step's
/// batch, the step averages the gradients, rank 0 logs and writes). Progress and nanochat's
/// log lines go to `log`. When the checkpoint does not reload as trained (verify_checkpoint)
/// the run summary is still written and the result is DataLoss.
absl::StatusOr<SftResult> RunSft(const TrainerOptions& options, std::ostream& log,
                                 runtime::collectives::Communicator& world);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_LOOP_SFT_RUN_H_
