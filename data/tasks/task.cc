// Implements Task's slicing.
#include "data/tasks/task.h"

#include "absl/strings/str_cat.h"

namespace gpt_sft::data {

absl::Status Task::SetSlice(int64_t start, std::optional<int64_t> stop, int64_t step) {
  const int64_t n = num_examples();
  const int64_t end = stop.value_or(n);
  if (start < 0 || end < start || end > n || step < 1) {
    return absl::InvalidArgumentError(absl::StrCat(name(), ": bad slice start=", start, " stop=",
                                                   stop ? absl::StrCat(*stop) : "None", " step=", step, " of ", n,
                                                   " examples (need 0 <= start <= stop <= ", n, ", step >= 1)"));
  }
  start_ = start, stop_ = stop, step_ = step;
  return absl::OkStatus();
}

int64_t Task::size() const {
  const int64_t span = stop_.value_or(num_examples()) - start_;
  return span <= 0 ? 0 : (span + step_ - 1) / step_;
}

absl::StatusOr<Example> Task::Get(int64_t i) const {
  if (i < 0 || i >= size()) {
    return absl::OutOfRangeError(absl::StrCat(name(), ": example ", i, " is outside [0, ", size(), ")"));
  }
  return GetExample(start_ + i * step_);
}

}  // namespace gpt_sft::data
