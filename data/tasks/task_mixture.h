// nanochat's TaskMixture: every example of every task, in one deterministic shuffle.
#ifndef GPT_SFT_DATA_TASKS_TASK_MIXTURE_H_
#define GPT_SFT_DATA_TASKS_TASK_MIXTURE_H_

#include <memory>
#include <utility>
#include <vector>

#include "data/tasks/task.h"

namespace gpt_sft::data {

/// The (task, local index) pairs, tasks in order and each task's indices in order, are
/// shuffled once with Python's random.Random(42).shuffle, as nanochat does. Passing a
/// task twice oversamples it.
class TaskMixture {
 public:
  explicit TaskMixture(std::vector<std::shared_ptr<const Task>> tasks);
  int64_t size() const { return static_cast<int64_t>(order_.size()); }
  absl::StatusOr<Example> Get(int64_t i) const;
  /// (task index, local index) of mixture row i.
  std::pair<int, int64_t> Locate(int64_t i) const { return order_[i]; }
  const std::vector<std::shared_ptr<const Task>>& tasks() const { return tasks_; }

 private:
  std::vector<std::shared_ptr<const Task>> tasks_;
  std::vector<std::pair<int, int64_t>> order_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_TASK_MIXTURE_H_
