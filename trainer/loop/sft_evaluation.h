// SftEvaluation: the metrics chat SFT reports every `eval_metrics_every` steps, on the same
// weights the loop trains (ParamStore views, no copy): categorical multiple-choice accuracy
// on the offline multiple-choice task (the letters' logits only, nanochat's way) and
// exact-match accuracy of greedy generations on the held-out spelling tasks. With a world of
// several ranks the problems are dealt out (trainer/eval/problem_share.h) and the counts summed,
// so every world size scores the same problems and reports the one-rank figures, N times sooner.
#ifndef GPT_SFT_TRAINER_LOOP_SFT_EVALUATION_H_
#define GPT_SFT_TRAINER_LOOP_SFT_EVALUATION_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/builder/step_config.h"
#include "data/tokenizer/tokenizer.h"
#include "runtime/collectives/communicator.h"
#include "runtime/params/param_store.h"
#include "trainer/eval/evaluation_progress.h"

namespace gpt_sft::trainer {

class LogitsEvaluator;
class Generator;

class SftEvaluation {
 public:
  /// `params` and `tokenizer` (and `world`, when given) must outlive the evaluation.
  /// `words_path` is the spelling tasks' word list; `seed` picks the held-out multiple-choice
  /// problems. `world` null: one rank scores every problem. Else every rank must call Run
  /// together (it all-reduces), and each gets the same, whole-world metrics. `dtype`: the
  /// multiple-choice logits' numerics (the training step's: f32, or bf16 autocast); sampling
  /// for the generative tasks runs f32.
  static absl::StatusOr<std::unique_ptr<SftEvaluation>> Create(
      const runtime::ParamStore* params, const data::Tokenizer* tokenizer, const std::string& words_path,
      int64_t max_problems, int64_t seed, int num_threads, runtime::collectives::Communicator* world = nullptr,
      compiler::ElementType dtype = compiler::ElementType::kF32);
  ~SftEvaluation();

  /// {"synthetic_mc_acc", x}, {"simple_spelling_acc", y}, {"spelling_bee_acc", z}, in order.
  /// `progress` hears each task's problems as they are scored (this rank's share).
  absl::StatusOr<std::vector<std::pair<std::string, double>>> Run(const EvaluationProgress& progress = nullptr);

 private:
  SftEvaluation() = default;
  const data::Tokenizer* tokenizer_ = nullptr;
  std::string words_path_;
  int64_t max_problems_ = 0, seed_ = 0;
  runtime::collectives::Communicator* world_ = nullptr;
  std::unique_ptr<LogitsEvaluator> logits_;
  std::unique_ptr<Generator> generator_;
};

/// nanochat's metrics line: "Step 00200 | synthetic_mc_acc: 0.250000, simple_spelling_acc: ...".
std::string FormatMetricsLine(int64_t step, const std::vector<std::pair<std::string, double>>& metrics);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_LOOP_SFT_EVALUATION_H_
