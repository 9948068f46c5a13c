// A task: an indexable source of conversations with nanochat's logical slicing
// (start, stop, step) and a way to score a model's answer.
#ifndef GPT_SFT_DATA_TASKS_TASK_H_
#define GPT_SFT_DATA_TASKS_TASK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "data/conversation/conversation.h"

namespace gpt_sft::data {

/// One row of a task.
struct Example {
  Conversation conversation;
  /// Multiple choice only: the answer letters in the order the question lists them (the
  /// categorical eval compares the logits of exactly these tokens). Empty otherwise.
  std::vector<std::string> letters;
  /// Multiple choice: the correct letter (one of `letters`). Generative tasks: the
  /// reference answer their Evaluate compares against (e.g. the number after "####").
  std::string answer;
};

/// nanochat's eval_type: 'categorical' (argmax over the answer letters' logits) or
/// 'generative' (sample a completion, then Evaluate it).
enum class EvalType { kCategorical, kGenerative };

inline const char* EvalTypeName(EvalType t) { return t == EvalType::kCategorical ? "categorical" : "generative"; }

/// Subclasses implement num_examples() and GetExample() over their physical rows; users
/// call size() and Get(), which see the logical slice. Not thread-safe while SetSlice runs.
class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  virtual EvalType eval_type() const = 0;
  /// Physical rows, before slicing.
  virtual int64_t num_examples() const = 0;
  /// Physical row `index`, 0 <= index < num_examples(); OutOfRange otherwise.
  virtual absl::StatusOr<Example> GetExample(int64_t index) const = 0;
  /// Whether `completion` (the assistant's decoded reply) answers `example` correctly.
  /// Default: exact match with example.answer (for categorical tasks, the letter).
  virtual bool Evaluate(const Example& example, std::string_view completion) const {
    return completion == example.answer;
  }

  /// nanochat's Task(start, stop, step): physical rows start, start+step, ... < stop, with
  /// stop = num_examples() when unset. Needs 0 <= start <= stop <= num_examples() and
  /// step >= 1; otherwise InvalidArgument, and the slice is left as it was.
  absl::Status SetSlice(int64_t start, std::optional<int64_t> stop = std::nullopt, int64_t step = 1);

  /// ceil((stop - start) / step).
  int64_t size() const;
  /// Logical row i = physical row start + i * step; OutOfRange unless 0 <= i < size().
  absl::StatusOr<Example> Get(int64_t i) const;

 private:
  int64_t start_ = 0;
  std::optional<int64_t> stop_;
  int64_t step_ = 1;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_TASK_H_
