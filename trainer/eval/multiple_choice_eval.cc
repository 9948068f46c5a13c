#include "trainer/eval/multiple_choice_eval.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "data/conversation/render.h"

namespace gpt_sft::trainer {

absl::StatusOr<std::vector<int32_t>> LetterTokenIds(const data::Tokenizer& tokenizer,
                                                    const std::vector<std::string>& letters) {
  std::vector<int32_t> ids;
  for (const std::string& letter : letters) {
    std::vector<int32_t> encoded = tokenizer.Encode(letter);
    if (encoded.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("answer letter \"", letter, "\" encodes to ", encoded.size(),
                                                     " tokens; categorical scoring needs exactly one"));
    }
    ids.push_back(encoded[0]);
  }
  return ids;
}

int PickLetter(absl::Span<const float> logits, const std::vector<int32_t>& letter_ids) {
  int best = 0;
  for (int k = 1; k < static_cast<int>(letter_ids.size()); ++k) {
    if (logits[letter_ids[k]] > logits[letter_ids[best]]) best = k;  // strict: the first wins a tie
  }
  return best;
}

namespace {

// Whether the model's pick for one problem is its reference letter.
absl::StatusOr<bool> ScoreProblem(LogitsEvaluator& evaluator, const data::Example& example,
                                  const data::Tokenizer& tokenizer) {
  if (example.letters.empty()) return absl::InvalidArgumentError("the example carries no answer letters");
  absl::StatusOr<std::vector<int32_t>> letter_ids = LetterTokenIds(tokenizer, example.letters);
  if (!letter_ids.ok()) return letter_ids.status();
  absl::StatusOr<std::vector<int32_t>> prompt = data::RenderForCompletion(example.conversation, tokenizer);
  if (!prompt.ok()) return prompt.status();
  absl::StatusOr<runtime::Tensor> logits = evaluator.Logits(*prompt);
  if (!logits.ok()) return logits.status();
  const int64_t V = logits->dim(1);
  for (int32_t id : *letter_ids) {
    if (id >= V) return absl::InvalidArgumentError(absl::StrCat("letter token id ", id, " >= the model's vocab ", V));
  }
  const float* last = logits->data<float>() + (logits->dim(0) - 1) * V;  // the <|assistant_start|> position
  const int pick = PickLetter(absl::MakeConstSpan(last, V), *letter_ids);
  return example.letters[pick] == example.answer;
}

}  // namespace

absl::StatusOr<MultipleChoiceResult> EvaluateMultipleChoice(LogitsEvaluator& evaluator, const data::Task& task,
                                                            const data::Tokenizer& tokenizer, int64_t max_problems,
                                                            const MultipleChoiceProgress& progress,
                                                            ProblemShare share) {
  if (task.eval_type() != data::EvalType::kCategorical) {
    return absl::InvalidArgumentError(
        absl::StrCat("task ", task.name(), " is ", data::EvalTypeName(task.eval_type()), ", not categorical"));
  }
  if (!share.valid()) {
    return absl::InvalidArgumentError(absl::StrCat("problem share: rank ", share.rank, " of ", share.ranks));
  }
  MultipleChoiceResult result;
  const int64_t n = max_problems < 0 ? task.size() : std::min(task.size(), max_problems);
  result.problems = share.CountOf(n);
  int64_t done = 0;
  for (int64_t i = share.rank; i < n; i += share.ranks) {
    absl::StatusOr<data::Example> example = task.Get(i);
    absl::StatusOr<bool> correct = example.ok() ? ScoreProblem(evaluator, *example, tokenizer)
                                                : absl::StatusOr<bool>(example.status());
    if (!correct.ok()) {
      return absl::Status(correct.status().code(),
                          absl::StrCat("task ", task.name(), " problem ", i, ": ", correct.status().message()));
    }
    result.correct += *correct ? 1 : 0;
    if (progress) progress(++done, result.problems, result.correct);
  }
  if (result.problems > 0) result.accuracy = static_cast<double>(result.correct) / static_cast<double>(result.problems);
  return result;
}

}  // namespace gpt_sft::trainer
