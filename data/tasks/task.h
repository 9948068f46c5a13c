// A task: an indexable source of conversations with nanochat's logical slicing
// (start, stop, step) and a way to score a model's answer.
#ifndef GPT_SFT_DATA_TASKS_TASK_H_
#define GPT_SFT_DATA_TASKS_TASK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "data/conversation/conversation.h"

namespace gpt_sft::data {

struct Example {
  Conversation conversation;
  std::vector<std::string> letters;  // multiple choice only: the answer letters, in order
  std::string answer;                // the reference answer (a letter, or the text to match)
};

enum class EvalType { kCategorical, kGenerative };

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  virtual EvalType eval_type() const = 0;
  /// Examples before slicing.
  virtual int64_t num_examples() const = 0;
  virtual absl::StatusOr<Example> GetExample(int64_t index) const = 0;
  /// Generative tasks: whether `completion` (the assistant's decoded text) is right.
  virtual bool Evaluate(const Example& example, std::string_view completion) const {
    return completion == example.answer;
  }

  /// nanochat's Task(start, stop, step): a logical slice; stop < 0 means the end.
  void SetSlice(int64_t start, int64_t stop = -1, int64_t step = 1) {
    start_ = start, stop_ = stop, step_ = step;
  }
  /// ceil((stop - start) / step)
  int64_t size() const {
    const int64_t stop = stop_ < 0 ? num_examples() : stop_;
    return stop <= start_ ? 0 : (stop - start_ + step_ - 1) / step_;
  }
  absl::StatusOr<Example> Get(int64_t i) const { return GetExample(start_ + i * step_); }

 private:
  int64_t start_ = 0, stop_ = -1, step_ = 1;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_TASK_H_
