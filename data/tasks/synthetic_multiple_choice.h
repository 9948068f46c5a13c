// A seeded generator of answerable multiple-choice questions (small arithmetic, and
// "which number is the largest"), so categorical evaluation runs offline.
#ifndef GPT_SFT_DATA_TASKS_SYNTHETIC_MULTIPLE_CHOICE_H_
#define GPT_SFT_DATA_TASKS_SYNTHETIC_MULTIPLE_CHOICE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "data/tasks/multiple_choice_task.h"
#include "data/tasks/task.h"

namespace gpt_sft::data {

/// Question i depends only on (seed, i): it draws from Python's
/// random.Random(i + (seed << 64)), so a python3 one-liner can reproduce it:
///   kind = randbelow(4)
///   0: a, b = 1+randbelow(50), 1+randbelow(50)    "What is a + b?"
///   1: a = 10+randbelow(90); b = 1+randbelow(a-1)  "What is a - b?"
///   2: a, b = 2+randbelow(11), 2+randbelow(11)    "What is a * b?"
///   3: four distinct 1+randbelow(99)              "Which of these numbers is the largest?"
///   arithmetic: the right value, then distinct wrong ones right+randbelow(21)-10 >= 0
///   until there are 4; then shuffle; letters A-D.
class SyntheticMultipleChoiceTask : public Task {
 public:
  SyntheticMultipleChoiceTask(int64_t num_examples, uint64_t seed) : n_(num_examples), seed_(seed) {}

  std::string name() const override { return "SyntheticMultipleChoice"; }
  EvalType eval_type() const override { return EvalType::kCategorical; }
  int64_t num_examples() const override { return n_; }
  absl::StatusOr<Example> GetExample(int64_t index) const override;

  /// The question behind GetExample(index); index must be in [0, num_examples()).
  MultipleChoiceQuestion Question(int64_t index) const;

 private:
  int64_t n_;
  uint64_t seed_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_SYNTHETIC_MULTIPLE_CHOICE_H_
