#include "trainer/sft_evaluation.h"

#include "absl/strings/str_format.h"
#include "data/tasks/spelling_tasks.h"
#include "data/tasks/synthetic_multiple_choice.h"
#include "trainer/eval/logits_evaluator.h"
#include "trainer/eval/multiple_choice_eval.h"
#include "trainer/generation/generative_eval.h"
#include "trainer/generation/generator.h"

namespace gpt_sft::trainer {

// Spelling answers are a few dozen tokens; this bounds a model that never says it is done.
inline constexpr int kGenerativeMaxTokens = 128;

SftEvaluation::~SftEvaluation() = default;

absl::StatusOr<std::unique_ptr<SftEvaluation>> SftEvaluation::Create(const runtime::ParamStore* params,
                                                                    const data::Tokenizer* tokenizer,
                                                                    const std::string& words_path,
                                                                    int64_t max_problems, int64_t seed,
                                                                    int num_threads) {
  std::unique_ptr<SftEvaluation> eval(new SftEvaluation());
  eval->tokenizer_ = tokenizer;
  eval->words_path_ = words_path;
  eval->max_problems_ = max_problems;
  eval->seed_ = seed;
  runtime::InterpreterOptions options;
  options.num_threads = num_threads;
  absl::StatusOr<std::unique_ptr<LogitsEvaluator>> logits = LogitsEvaluator::Create(params, options);
  if (!logits.ok()) return logits.status();
  eval->logits_ = std::move(*logits);
  absl::StatusOr<std::unique_ptr<Generator>> generator = Generator::Create(*params, {num_threads});
  if (!generator.ok()) return generator.status();
  eval->generator_ = std::move(*generator);
  return eval;
}

absl::StatusOr<std::vector<std::pair<std::string, double>>> SftEvaluation::Run() {
  std::vector<std::pair<std::string, double>> metrics;
  // Held out: the training mixture draws its synthetic problems from seeds seed and seed+1.
  data::SyntheticMultipleChoiceTask mc(max_problems_, static_cast<uint64_t>(seed_) + 1000);
  absl::StatusOr<MultipleChoiceResult> choice = EvaluateMultipleChoice(*logits_, mc, *tokenizer_, max_problems_);
  if (!choice.ok()) return choice.status();
  metrics.push_back({"synthetic_mc_acc", choice->accuracy});

  absl::StatusOr<std::shared_ptr<const std::vector<std::string>>> words = data::LoadWordList(words_path_);
  if (!words.ok()) return words.status();
  GenerativeEvalOptions options;
  options.max_problems = max_problems_;
  options.max_tokens = kGenerativeMaxTokens;
  data::SimpleSpellingTask simple(*words, max_problems_, data::Split::kTest);
  absl::StatusOr<GenerativeEvalResult> spelled = RunGenerativeEval(simple, *tokenizer_, *generator_, options);
  if (!spelled.ok()) return spelled.status();
  metrics.push_back({"simple_spelling_acc", spelled->accuracy()});
  data::SpellingBeeTask bee(*words, max_problems_, data::Split::kTest);
  absl::StatusOr<GenerativeEvalResult> counted = RunGenerativeEval(bee, *tokenizer_, *generator_, options);
  if (!counted.ok()) return counted.status();
  metrics.push_back({"spelling_bee_acc", counted->accuracy()});
  return metrics;
}

std::string FormatMetricsLine(int64_t step, const std::vector<std::pair<std::string, double>>& metrics) {
  std::string line = absl::StrFormat("Step %05d | ", step);
  for (size_t i = 0; i < metrics.size(); ++i) {
    line += absl::StrFormat("%s%s: %.6f", i ? ", " : "", metrics[i].first, metrics[i].second);
  }
  return line;
}

}  // namespace gpt_sft::trainer
