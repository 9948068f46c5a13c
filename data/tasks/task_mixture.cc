// Implements TaskMixture.
#include "data/tasks/task_mixture.h"

#include "absl/strings/str_cat.h"
#include "data/tasks/python_random.h"

namespace gpt_sft::data {

TaskMixture::TaskMixture(std::vector<std::shared_ptr<const Task>> tasks) : tasks_(std::move(tasks)) {
  int64_t total = 0;
  for (const auto& t : tasks_) total += t->size();
  order_.reserve(total);
  for (int t = 0; t < static_cast<int>(tasks_.size()); ++t) {
    for (int64_t l = 0; l < tasks_[t]->size(); ++l) order_.emplace_back(t, l);
  }
  PythonRandom(42).Shuffle(&order_);
}

absl::StatusOr<Example> TaskMixture::Get(int64_t i) const {
  if (i < 0 || i >= size()) return absl::OutOfRangeError(absl::StrCat("mixture row ", i, " is outside [0, ", size(), ")"));
  const auto [t, l] = order_[i];
  return tasks_[t]->Get(l);
}

}  // namespace gpt_sft::data
