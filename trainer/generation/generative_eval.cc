#include "trainer/generation/generative_eval.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "data/conversation/render.h"
#include "trainer/generation/calculator.h"

namespace gpt_sft::trainer {

absl::StatusOr<GenerativeEvalResult> RunGenerativeEval(const data::Task& task, const data::Tokenizer& tokenizer,
                                                       Generator& generator, const GenerativeEvalOptions& options) {
  if (options.max_problems < 1) {
    return absl::InvalidArgumentError(absl::StrCat("max_problems must be >= 1, got ", options.max_problems));
  }
  if (!options.share.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("problem share: rank ", options.share.rank, " of ", options.share.ranks));
  }
  GenerativeEvalResult result;
  result.task = task.name();
  GenerateOptions generate;
  generate.sampling = options.sampling;
  generate.max_tokens = options.max_tokens;
  generate.stop_tokens = {tokenizer.SpecialId(data::SpecialToken::kAssistantEnd),
                          tokenizer.SpecialId(data::SpecialToken::kBos)};
  if (options.use_calculator) generate.tool = CalculatorTool(tokenizer);
  const auto start = std::chrono::steady_clock::now();
  const int64_t n = std::min(task.size(), options.max_problems);
  for (int64_t i = options.share.rank; i < n; i += options.share.ranks) {
    auto where = [&](const absl::Status& s) {
      return absl::Status(s.code(), absl::StrCat(task.name(), " problem ", i, ": ", s.message()));
    };
    auto example = task.Get(i);
    if (!example.ok()) return where(example.status());
    auto prompt = data::RenderForCompletion(example->conversation, tokenizer);
    if (!prompt.ok()) return where(prompt.status());
    auto reply = generator.Generate(*prompt, generate);
    if (!reply.ok()) return where(reply.status());
    result.generated_tokens += static_cast<int64_t>(reply->size());
    result.passed += task.Evaluate(*example, tokenizer.Decode(*reply)) ? 1 : 0;
    ++result.total;
    if (options.progress) options.progress(task.name(), result.total, options.share.CountOf(n));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string FormatGenerativeEval(const GenerativeEvalResult& r) {
  return absl::StrFormat("%s: %d/%d = %.2f%% exact match (%d tokens, %.1f s)", r.task, r.passed, r.total,
                         100.0 * r.accuracy(), r.generated_tokens, r.seconds);
}

}  // namespace gpt_sft::trainer
