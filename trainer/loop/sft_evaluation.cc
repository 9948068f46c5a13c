#include "trainer/loop/sft_evaluation.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "data/tasks/spelling_tasks.h"
#include "data/tasks/synthetic_multiple_choice.h"
#include "trainer/eval/logits_evaluator.h"
#include "trainer/eval/multiple_choice_eval.h"
#include "trainer/eval/problem_share.h"
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
                                                                    int num_threads,
                                                                    runtime::collectives::Communicator* world,
                                                                    compiler::ElementType dtype) {
  std::unique_ptr<SftEvaluation> eval(new SftEvaluation());
  eval->tokenizer_ = tokenizer;
  eval->words_path_ = words_path;
  eval->max_problems_ = max_problems;
  eval->seed_ = seed;
  eval->world_ = world;
  runtime::InterpreterOptions options;
  options.num_threads = num_threads;
  absl::StatusOr<std::unique_ptr<LogitsEvaluator>> logits = LogitsEvaluator::Create(params, options, dtype);
  if (!logits.ok()) return logits.status();
  eval->logits_ = std::move(*logits);
  absl::StatusOr<std::unique_ptr<Generator>> generator = Generator::Create(*params, {num_threads});
  if (!generator.ok()) return generator.status();
  eval->generator_ = std::move(*generator);
  return eval;
}

absl::StatusOr<std::vector<std::pair<std::string, double>>> SftEvaluation::Run(const EvaluationProgress& progress) {
  ProblemShare share;
  if (world_ != nullptr) share = {world_->rank(), world_->world_size()};
  // This rank's [correct, scored] per metric, then summed over the ranks.
  std::vector<double> counts;
  // Held out: the training mixture draws its synthetic problems from seeds seed and seed+1.
  data::SyntheticMultipleChoiceTask mc(max_problems_, static_cast<uint64_t>(seed_) + 1000);
  absl::StatusOr<MultipleChoiceResult> choice =
      EvaluateMultipleChoice(*logits_, mc, *tokenizer_, max_problems_,
                             [&](int64_t done, int64_t total, int64_t) {
                               if (progress) progress(mc.name(), done, total);
                             },
                             share);
  if (!choice.ok()) return choice.status();
  counts.insert(counts.end(), {double(choice->correct), double(choice->problems)});

  absl::StatusOr<std::shared_ptr<const std::vector<std::string>>> words = data::LoadWordList(words_path_);
  if (!words.ok()) return words.status();
  GenerativeEvalOptions options;
  options.max_problems = max_problems_;
  options.max_tokens = kGenerativeMaxTokens;
  options.share = share;
  options.progress = progress;
  data::SimpleSpellingTask simple(*words, max_problems_, data::Split::kTest);
  absl::StatusOr<GenerativeEvalResult> spelled = RunGenerativeEval(simple, *tokenizer_, *generator_, options);
  if (!spelled.ok()) return spelled.status();
  counts.insert(counts.end(), {double(spelled->passed), double(spelled->total)});
  data::SpellingBeeTask bee(*words, max_problems_, data::Split::kTest);
  absl::StatusOr<GenerativeEvalResult> counted = RunGenerativeEval(bee, *tokenizer_, *generator_, options);
  if (!counted.ok()) return counted.status();
  counts.insert(counts.end(), {double(counted->passed), double(counted->total)});

  if (world_ != nullptr && world_->world_size() > 1) {
    if (absl::Status s = world_->AllReduce(counts.data(), int64_t(counts.size()),
                                           runtime::collectives::DataType::kFloat64,
                                           runtime::collectives::ReduceOp::kSum);
        !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("summing the evaluation metrics over the ranks: ", s.message()));
    }
  }
  auto accuracy = [&](int k) { return counts[2 * k + 1] > 0 ? counts[2 * k] / counts[2 * k + 1] : 0.0; };
  return std::vector<std::pair<std::string, double>>{
      {"synthetic_mc_acc", accuracy(0)}, {"simple_spelling_acc", accuracy(1)}, {"spelling_bee_acc", accuracy(2)}};
}

std::string FormatMetricsLine(int64_t step, const std::vector<std::pair<std::string, double>>& metrics) {
  std::string line = absl::StrFormat("Step %05d | ", step);
  for (size_t i = 0; i < metrics.size(); ++i) {
    line += absl::StrFormat("%s%s: %.6f", i ? ", " : "", metrics[i].first, metrics[i].second);
  }
  return line;
}

}  // namespace gpt_sft::trainer
