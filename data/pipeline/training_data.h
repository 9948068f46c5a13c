// TrainingData: what a run trains and validates on, from the data flags the trainer and
// //data:dump_batch share, so the batches dump_batch shows are the trainer's:
//
//   --jsonl=a.jsonl[,b.jsonl]  the user's conversations (CustomJSON lines: an optional system
//                              message, user/assistant turns, assistant parts), trained on
//   --jsonl_repeat=N           each --jsonl file enters the mixture N times (nanochat
//                              oversamples a task by listing it again; default 1)
//   --builtin_tasks=true|false the offline built-in tasks (SpellingBee, SimpleSpelling,
//                              SyntheticMultipleChoice) in the training mixture too
//                              (default true: mixed with --jsonl, as nanochat mixes its
//                              identity conversations into its task mixture)
//   --val_jsonl=c.jsonl[,...]  held-out conversations: the validation loss is measured on
//                              these files alone. Without it, validation uses the built-in
//                              tasks' held-out split (their test seeds), whatever
//                              --builtin_tasks says, and the log says so.
//
// Every task's rows are shuffled together once (TaskMixture, nanochat's Random(42)).
#ifndef GPT_SFT_DATA_PIPELINE_TRAINING_DATA_H_
#define GPT_SFT_DATA_PIPELINE_TRAINING_DATA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "data/tasks/task_mixture.h"

namespace gpt_sft::data {

struct TrainingDataOptions {
  std::vector<std::string> jsonl;      // --jsonl
  std::vector<std::string> val_jsonl;  // --val_jsonl
  bool builtin_tasks = true;           // --builtin_tasks
  int jsonl_repeat = 1;                // --jsonl_repeat
  std::string words_path;              // the spelling tasks' word list (built-in tasks only)
  int64_t examples_per_task = 2000;    // rows of each built-in task
  int64_t seed = 42;                   // the synthetic multiple-choice seed (--seed)
  std::vector<std::string> multiple_choice_jsonl;  // dump_batch's --mc_jsonl (training only)
};

struct TrainingData {
  std::shared_ptr<const TaskMixture> train;
  std::shared_ptr<const TaskMixture> val;
  /// Two log lines, e.g. "Training data: 6,012 rows: SpellingBee 2000, ...,
  /// CustomJSON(a.jsonl) 12 x2" and "Validation data: ... (--val_jsonl)".
  std::string description;
};

/// The cheap checks, run before any work: --jsonl_repeat >= 1; something to train on
/// (--builtin_tasks=false needs --jsonl); every named file exists and is a readable regular
/// file; no file is both trained on and held out. Each error names the flag and the file.
absl::Status ValidateTrainingDataFlags(const TrainingDataOptions& options);

/// Reads every file (each line checked; errors "--jsonl: a.jsonl:12: malformed JSON: ...")
/// and builds both mixtures. Runs ValidateTrainingDataFlags first.
absl::StatusOr<TrainingData> BuildTrainingData(const TrainingDataOptions& options);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_PIPELINE_TRAINING_DATA_H_
