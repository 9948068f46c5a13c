// Multiple-choice questions in nanochat's ARC/MMLU conversation format, read from JSONL,
// and a seeded synthetic generator of such questions so evaluation runs offline.
#ifndef GPT_SFT_DATA_TASKS_MULTIPLE_CHOICE_TASK_H_
#define GPT_SFT_DATA_TASKS_MULTIPLE_CHOICE_TASK_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/tasks/task.h"

namespace gpt_sft::data {

struct MultipleChoiceQuestion {
  std::string question;
  std::vector<std::string> choices;
  std::vector<std::string> letters;  // one per choice
  std::string answer;                // one of `letters`
};

/// nanochat's render_mc, byte for byte:
///   "Multiple Choice question: <q>\n" + "- <choice>=<letter>\n" per choice +
///   "\nRespond only with the letter of the correct answer."
std::string RenderMultipleChoice(const MultipleChoiceQuestion& q);

/// The conversation [user: render_mc(q), assistant: answer letter] with its letters.
Example MultipleChoiceExample(const MultipleChoiceQuestion& q);

class MultipleChoiceTask : public Task {
 public:
  /// Each line: {"question": str, "choices": [str...], "letters": [str...] (optional,
  /// default A, B, C, ...), "answer": letter}. Errors name the file and line.
  static absl::StatusOr<std::unique_ptr<MultipleChoiceTask>> Load(const std::string& path);
  explicit MultipleChoiceTask(std::string name, std::vector<MultipleChoiceQuestion> questions)
      : name_(std::move(name)), questions_(std::move(questions)) {}

  std::string name() const override { return name_; }
  EvalType eval_type() const override { return EvalType::kCategorical; }
  int64_t num_examples() const override { return static_cast<int64_t>(questions_.size()); }
  absl::StatusOr<Example> GetExample(int64_t index) const override;

 private:
  std::string name_;
  std::vector<MultipleChoiceQuestion> questions_;
};

/// Seeded arithmetic questions ("What is 17 + 25?", four choices A-D, one right), so a
/// model fine-tuned on them can be scored offline. Question i depends only on (seed, i).
class SyntheticMultipleChoiceTask : public Task {
 public:
  SyntheticMultipleChoiceTask(int64_t num_examples, int64_t seed) : n_(num_examples), seed_(seed) {}
  std::string name() const override { return "SyntheticMC"; }
  EvalType eval_type() const override { return EvalType::kCategorical; }
  int64_t num_examples() const override { return n_; }
  absl::StatusOr<Example> GetExample(int64_t index) const override;

 private:
  int64_t n_, seed_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_MULTIPLE_CHOICE_TASK_H_
