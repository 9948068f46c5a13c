// nanochat's TaskMixture: every example of every task, in one deterministic shuffle.
#ifndef GPT_SFT_DATA_TASKS_TASK_MIXTURE_H_
#define GPT_SFT_DATA_TASKS_TASK_MIXTURE_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "data/tasks/task.h"

namespace gpt_sft::data {

/// Builds the (task index, local index) pairs, the tasks in order and each task's
/// logical indices 0..size()-1 in order, then shuffles that list once with Python's
/// random.Random(42).shuffle, as nanochat does. Passing a task twice oversamples it.
/// Memory: 16 bytes per row. Thread-safe to read once built (Get is const).
class TaskMixture {
 public:
  /// `tasks` holds no null pointers; their sizes are read now (slice them first).
  explicit TaskMixture(std::vector<std::shared_ptr<const Task>> tasks);

  int64_t size() const { return static_cast<int64_t>(order_.size()); }
  /// tasks[t].Get(l) for the i-th pair; OutOfRange unless 0 <= i < size().
  absl::StatusOr<Example> Get(int64_t i) const;
  /// (task index, local index) of mixture row i; 0 <= i < size().
  std::pair<int, int64_t> Locate(int64_t i) const { return order_[i]; }
  const std::vector<std::shared_ptr<const Task>>& tasks() const { return tasks_; }

 private:
  std::vector<std::shared_ptr<const Task>> tasks_;
  std::vector<std::pair<int, int64_t>> order_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_TASK_MIXTURE_H_
