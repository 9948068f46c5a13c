// SftSetup: what a chat-SFT run starts from, read before any file is written: the base model
// (or --init_from's nanochat checkpoint) and its tokenizer, the training and validation data,
// the compiled step's configuration and the loader's options for the flags; and the check that
// the flags leave a supervised target to train on.
#ifndef GPT_SFT_TRAINER_LOOP_SFT_SETUP_H_
#define GPT_SFT_TRAINER_LOOP_SFT_SETUP_H_

#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/builder/step_config.h"
#include "data/collate/loader.h"
#include "data/pipeline/training_data.h"
#include "data/tokenizer/tokenizer.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "runtime/params/param_store.h"
#include "trainer/config/trainer_options.h"

namespace gpt_sft::trainer {

/// The base model and tokenizer a run starts from, and its data.
struct SftSetup {
  std::string base_dir;
  std::shared_ptr<const data::Tokenizer> tokenizer;
  runtime::ResolvedCheckpoint source;
  std::unique_ptr<runtime::ParamStore> params;
  std::shared_ptr<const data::TaskMixture> train, val;
  std::string words_path;
};

/// Loads them for the options (the demo's set up already); errors name the flag or file.
absl::StatusOr<SftSetup> LoadSftSetup(const TrainerOptions& o, std::ostream& log);

/// The step the flags ask for on `model`: batch shape, packing, accumulation, ranks, dtype, optimizer.
compiler::StepConfig StepConfigFor(const TrainerOptions& o, const compiler::ModelConfig& model);

/// The training loader's options for the flags (this rank's share, the pad token of the packing).
data::LoaderOptions LoaderOptionsFor(const TrainerOptions& o, const data::Tokenizer& tok);

/// A --max_seq_len too short for any supervised target (every row cut before the first
/// assistant token) is refused before any file is made, naming the flag: the validation batches
/// (all of which would be empty) and the training batches of the run's first steps are rendered
/// until one holds a target (milliseconds when one does).
absl::Status CheckSequencesHoldTargets(const TrainerOptions& o, const SftSetup& setup, int64_t num_iterations,
                                       int eval_steps_per_rank);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_LOOP_SFT_SETUP_H_
