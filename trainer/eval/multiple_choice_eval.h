// Categorical multiple-choice accuracy, nanochat's way (chat_eval's categorical loop): each
// problem's prompt is render_for_completion of its conversation (so it ends with
// <|assistant_start|>); one forward; at the prompt's last position only the logits of the
// problem's letter tokens count, in the order the question lists them; their argmax (the
// first wins a tie) is the prediction, correct iff it equals the reference letter.
// accuracy = correct / problems. nanochat batches prompts right-padded with BOS; causal
// attention makes that padding harmless, so one prompt at a time scores the same.
#ifndef GPT_SFT_TRAINER_EVAL_MULTIPLE_CHOICE_EVAL_H_
#define GPT_SFT_TRAINER_EVAL_MULTIPLE_CHOICE_EVAL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "data/tasks/task.h"
#include "data/tokenizer/tokenizer.h"
#include "trainer/eval/logits_evaluator.h"
#include "trainer/eval/problem_share.h"

namespace gpt_sft::trainer {

struct MultipleChoiceResult {
  double accuracy = 0;  // correct / problems; 0 when there are no problems
  int64_t problems = 0;
  int64_t correct = 0;
};

/// The token id of each letter. nanochat asserts each encodes to exactly one token; here that
/// is an InvalidArgument naming the letter.
absl::StatusOr<std::vector<int32_t>> LetterTokenIds(const data::Tokenizer& tokenizer,
                                                    const std::vector<std::string>& letters);

/// The index k maximising logits[letter_ids[k]]; the smallest k wins a tie (torch.argmax).
/// Every id must index `logits`, and letter_ids must not be empty.
int PickLetter(absl::Span<const float> logits, const std::vector<int32_t>& letter_ids);

/// Called after each problem with (problems scored so far, problems in all, correct so far).
using MultipleChoiceProgress = std::function<void(int64_t done, int64_t total, int64_t correct)>;

/// Scores `share`'s part of the first min(task.size(), max_problems) problems of `task` (its
/// logical slice; max_problems < 0: all of them; the default share: every one). The task must
/// be categorical and every example carry letters and an answer. Errors name the task and the
/// problem index.
absl::StatusOr<MultipleChoiceResult> EvaluateMultipleChoice(LogitsEvaluator& evaluator, const data::Task& task,
                                                            const data::Tokenizer& tokenizer, int64_t max_problems,
                                                            const MultipleChoiceProgress& progress = nullptr,
                                                            ProblemShare share = {});

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_EVAL_MULTIPLE_CHOICE_EVAL_H_
