// Implements BuildSftMixture.
#include "data/pipeline/sft_mixture.h"

#include "data/tasks/custom_json_task.h"
#include "data/tasks/multiple_choice_task.h"
#include "data/tasks/spelling_tasks.h"
#include "data/tasks/synthetic_multiple_choice.h"

namespace gpt_sft::data {

absl::StatusOr<std::vector<std::shared_ptr<const Task>>> BuildSftTasks(const SftMixtureOptions& o) {
  std::vector<std::shared_ptr<const Task>> tasks;
  const Split split = o.test_split ? Split::kTest : Split::kTrain;
  if (o.spelling_bee > 0 || o.simple_spelling > 0) {
    auto words = LoadWordList(o.words_path);
    if (!words.ok()) return words.status();
    if (o.spelling_bee > 0) tasks.push_back(std::make_shared<SpellingBeeTask>(*words, o.spelling_bee, split));
    if (o.simple_spelling > 0) tasks.push_back(std::make_shared<SimpleSpellingTask>(*words, o.simple_spelling, split));
  }
  if (o.synthetic_mc > 0) {
    tasks.push_back(std::make_shared<SyntheticMultipleChoiceTask>(o.synthetic_mc, o.seed + (o.test_split ? 1 : 0)));
  }
  for (const std::string& path : o.conversation_jsonl) {
    absl::StatusOr<std::unique_ptr<CustomJsonTask>> task = CustomJsonTask::Load(path);
    if (!task.ok()) return task.status();
    const std::shared_ptr<const Task> shared = *std::move(task);
    for (int k = 0; k < o.conversation_jsonl_repeat; ++k) tasks.push_back(shared);
  }
  for (const std::string& path : o.multiple_choice_jsonl) {
    auto task = MultipleChoiceTask::Load(path);
    if (!task.ok()) return task.status();
    tasks.push_back(*std::move(task));
  }
  return tasks;
}

absl::StatusOr<std::shared_ptr<const TaskMixture>> BuildSftMixture(const SftMixtureOptions& o) {
  absl::StatusOr<std::vector<std::shared_ptr<const Task>>> tasks = BuildSftTasks(o);
  if (!tasks.ok()) return tasks.status();
  if (tasks->empty()) return absl::InvalidArgumentError("the task mixture is empty: enable a task or name a JSONL file");
  return std::make_shared<const TaskMixture>(*std::move(tasks));
}

}  // namespace gpt_sft::data
