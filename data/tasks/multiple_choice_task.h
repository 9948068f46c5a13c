// Multiple-choice questions in nanochat's ARC/MMLU conversation format, read from JSONL.
#ifndef GPT_SFT_DATA_TASKS_MULTIPLE_CHOICE_TASK_H_
#define GPT_SFT_DATA_TASKS_MULTIPLE_CHOICE_TASK_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "data/tasks/task.h"

namespace gpt_sft::data {

struct MultipleChoiceQuestion {
  std::string question;
  std::vector<std::string> choices;
  std::vector<std::string> letters;  // one per choice, e.g. A B C D (ARC also has 1 2 3 4)
  std::string answer;                // one of `letters`
};

/// At least 2 choices, as many letters as choices, letters non-empty and distinct, and
/// the answer one of them. Errors (InvalidArgument) say which rule failed.
absl::Status ValidateMultipleChoice(const MultipleChoiceQuestion& q);

/// nanochat's render_mc, byte for byte:
///   "Multiple Choice question: <question>\n"
///   "- <choice>=<letter>\n"                       one line per choice, letter after
///   "\nRespond only with the letter of the correct answer."
std::string RenderMultipleChoice(const MultipleChoiceQuestion& q);

/// [user: render_mc(q), assistant: q.answer], with letters and answer set, as nanochat's
/// ARC and MMLU build them.
Example MultipleChoiceExample(const MultipleChoiceQuestion& q);

class MultipleChoiceTask : public Task {
 public:
  /// One question per line:
  ///   {"question": str, "choices": [str, ...], "letters": [str, ...] (optional,
  ///    default "A", "B", "C", ... one per choice), "answer": letter}
  /// Blank lines are skipped; a missing file or a bad line is an error naming file:line.
  static absl::StatusOr<std::unique_ptr<MultipleChoiceTask>> Load(const std::string& path);

  /// `questions` must each pass ValidateMultipleChoice (Load guarantees it).
  MultipleChoiceTask(std::string name, std::vector<MultipleChoiceQuestion> questions)
      : name_(std::move(name)), questions_(std::move(questions)) {}

  std::string name() const override { return name_; }
  EvalType eval_type() const override { return EvalType::kCategorical; }
  int64_t num_examples() const override { return static_cast<int64_t>(questions_.size()); }
  absl::StatusOr<Example> GetExample(int64_t index) const override;

 private:
  std::string name_;
  std::vector<MultipleChoiceQuestion> questions_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_MULTIPLE_CHOICE_TASK_H_
