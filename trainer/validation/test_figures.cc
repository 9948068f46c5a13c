#include "trainer/validation/test_figures.h"

#include <algorithm>

namespace gpt_sft::trainer::validation {

double StepLoss(const StepMetrics& m) { return m.loss_mean.value_or(m.loss); }

TestFigures ComputeFigures(const std::vector<StepMetrics>& steps, const std::optional<RunSummary>& summary,
                           int warmup_steps) {
  TestFigures f;
  f.steps = static_cast<int>(steps.size());
  std::vector<double> seconds, tokens, supervised;
  std::optional<int64_t> peak_rss;
  for (const StepMetrics& m : steps) {
    for (const BatchShape& shape : m.batch_shapes) {
      if (std::find(f.batch_shapes.begin(), f.batch_shapes.end(), shape) == f.batch_shapes.end()) {
        f.batch_shapes.push_back(shape);
      }
    }
    peak_rss = std::max(peak_rss.value_or(0), m.peak_rss_bytes);
    if (m.step < warmup_steps) continue;
    seconds.push_back(m.step_seconds);
    tokens.push_back(m.tokens_per_second);
    supervised.push_back(m.supervised_tokens_per_second);
  }
  f.measured_steps = static_cast<int>(seconds.size());
  f.seconds_per_step = SpreadOf(seconds);
  f.tokens_per_second = SpreadOf(tokens);
  f.supervised_tokens_per_second = SpreadOf(supervised);
  if (!steps.empty()) {
    f.first_loss = steps.front().loss;
    f.final_loss = steps.back().loss;
    f.final_loss_mean = steps.back().loss_mean;
    f.recompilations_training = steps.back().recompilations;
  }
  f.peak_rss_bytes = peak_rss;
  if (!summary) return f;
  if (summary->first_loss) f.first_loss = summary->first_loss;
  if (summary->final_loss) f.final_loss = summary->final_loss;
  if (summary->final_loss_mean) f.final_loss_mean = summary->final_loss_mean;
  f.val_loss = summary->val_loss;
  if (summary->compile) {
    f.cache_hit = summary->compile->cache_hit;
    f.compile_seconds = summary->compile->seconds;
    f.artifact_key = summary->compile->key;
  }
  if (summary->recompilations_training) f.recompilations_training = summary->recompilations_training;
  f.recompilations_evaluation = summary->recompilations_evaluation;
  if (summary->peak_rss_bytes) f.peak_rss_bytes = std::max(peak_rss.value_or(0), *summary->peak_rss_bytes);
  return f;
}

}  // namespace gpt_sft::trainer::validation
