// The generative evaluation (nanochat's run_chat_eval generative loop, NANOCHAT.md 8.3) on
// one rank: for each of the first N problems of a task, render the conversation for
// completion (data/conversation RenderForCompletion: everything but the assistant's reply,
// then <|assistant_start|>), generate (greedy by default: temperature 0, as nanochat's
// eval), decode the tokens before <|assistant_end|> (or <|bos|>, or max_tokens), and score
// the text with the task's own Evaluate:
//   * SimpleSpelling: exact match with the reference "<word>:<l>,<e>,...";
//   * SpellingBee: the number after "####" in the completion equals the reference's (GSM8K
//     extraction, data/tasks/spelling_tasks.h).
// One sample per problem (nanochat's num_samples = 1). As nanochat's Engine, generation runs
// the calculator tool (calculator.h): after <|python_end|> the block's value is forced in
// as <|output_start|> value <|output_end|> (SpellingBee's '<word>'.count('<letter>')).
#ifndef GPT_SFT_TRAINER_GENERATION_GENERATIVE_EVAL_H_
#define GPT_SFT_TRAINER_GENERATION_GENERATIVE_EVAL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "data/tasks/task.h"
#include "data/tokenizer/tokenizer.h"
#include "trainer/eval/evaluation_progress.h"
#include "trainer/eval/problem_share.h"
#include "trainer/generation/generator.h"

namespace gpt_sft::trainer {

struct GenerativeEvalOptions {
  int64_t max_problems = 100;  // the first N of the task's logical rows (all if fewer); >= 1
  int max_tokens = 256;        // per reply (nanochat: 512)
  SamplingOptions sampling;    // temperature 0: greedy
  bool use_calculator = true;  // false: the model writes tool outputs itself
  ProblemShare share;          // this rank's part of the max_problems (default: all)
  /// Hears (task name, this rank's problems done, its problems in all) after each problem.
  EvaluationProgress progress;
};

struct GenerativeEvalResult {
  std::string task;
  int64_t passed = 0;
  int64_t total = 0;
  int64_t generated_tokens = 0;
  double seconds = 0;
  double accuracy() const { return total == 0 ? 0.0 : static_cast<double>(passed) / total; }
};

/// Runs the evaluation above. `generator` must be built from a model whose vocabulary holds
/// the tokenizer's ids. Errors name the task and the problem index.
absl::StatusOr<GenerativeEvalResult> RunGenerativeEval(const data::Task& task, const data::Tokenizer& tokenizer,
                                                       Generator& generator, const GenerativeEvalOptions& options);

/// "SimpleSpelling: 12/100 = 12.00% exact match (3456 tokens, 7.8 s)".
std::string FormatGenerativeEval(const GenerativeEvalResult& result);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_GENERATION_GENERATIVE_EVAL_H_
