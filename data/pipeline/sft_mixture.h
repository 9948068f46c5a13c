// The chat-SFT task mixture that runs offline: nanochat's synthetic spelling tasks over
// the machine's word list, synthetic multiple choice, and any JSONL files the user names.
#ifndef GPT_SFT_DATA_PIPELINE_SFT_MIXTURE_H_
#define GPT_SFT_DATA_PIPELINE_SFT_MIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/tasks/task_mixture.h"

namespace gpt_sft::data {

struct SftMixtureOptions {
  std::string words_path;                     // word list for the spelling tasks
  int64_t spelling_bee = 2000;                // examples of each synthetic task (0: leave out)
  int64_t simple_spelling = 2000;
  int64_t synthetic_mc = 2000;
  int64_t seed = 42;                          // synthetic multiple choice seed
  std::vector<std::string> conversation_jsonl;  // CustomJSON files
  int conversation_jsonl_repeat = 1;          // each CustomJSON file enters the mixture this often
  std::vector<std::string> multiple_choice_jsonl;
  bool test_split = false;                    // the spelling tasks' test seeds
};

/// The tasks, in this order: SpellingBee, SimpleSpelling, SyntheticMultipleChoice (each
/// left out at count 0), then every CustomJSON file (each file read once, added
/// conversation_jsonl_repeat times: nanochat oversamples a task by passing it again), then
/// every multiple-choice file. Errors name the file (and line) at fault. May be empty.
absl::StatusOr<std::vector<std::shared_ptr<const Task>>> BuildSftTasks(const SftMixtureOptions& options);

/// The mixture of BuildSftTasks; InvalidArgument when it would be empty.
absl::StatusOr<std::shared_ptr<const TaskMixture>> BuildSftMixture(const SftMixtureOptions& options);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_PIPELINE_SFT_MIXTURE_H_
