// Generator: sampling from a model on the interpreted path with a KV cache, nanochat's
// Engine.generate for one row (NANOCHAT.md 9): the prompt goes through @prefill once, then
// each sampled token through @decode, which appends its keys and values to the cache
// (compiler/builder/decode_builder.h). Weights are read in place from a ParamStore (views,
// no copy).
//
//   auto gen = Generator::Create(store);
//   auto reply = (*gen)->Generate(prompt_ids, {.sampling = {.temperature = 0.6, .top_k = 50},
//                                              .max_tokens = 256, .stop_tokens = {assistant_end, bos}});
//
// Not thread-safe: one sequence at a time per Generator.
#ifndef GPT_SFT_TRAINER_GENERATION_GENERATOR_H_
#define GPT_SFT_TRAINER_GENERATION_GENERATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/base/tensor.h"
#include "runtime/params/param_store.h"
#include "trainer/generation/sampler.h"

namespace gpt_sft::trainer {

struct GeneratorOptions {
  /// > 0: the kernels' thread count (InterpreterOptions::num_threads); 0 leaves it.
  int num_threads = 0;
};

/// nanochat's tool state machine (Engine, NANOCHAT.md 9): when a sampled <|python_end|>
/// closes a block opened by <|python_start|>, `run` gets the tokens between the two; a
/// result is forced into the sequence as <|output_start|> result <|output_end|> (the forced
/// tokens are returned and count toward max_tokens, as nanochat's do).
struct ToolUse {
  int32_t python_start = -1, python_end = -1, output_start = -1, output_end = -1;
  std::function<std::optional<std::vector<int32_t>>(const std::vector<int32_t>& code)> run;
};

struct GenerateOptions {
  SamplingOptions sampling;
  /// Tokens sampled at most (nanochat's max_tokens); >= 0.
  int max_tokens = 256;
  /// Generation ends at the first sampled token in this list, which is not returned
  /// (nanochat: <|assistant_end|> and <|bos|>).
  std::vector<int32_t> stop_tokens;
  /// Unset: no tool; the model writes anything itself.
  std::optional<ToolUse> tool;
};

/// Where the time of the last Generate went: the prompt (@prefill) and the sampled tokens
/// (@decode, one call per token after the first; sampling included).
struct GenerateStats {
  int64_t prompt_tokens = 0;
  int64_t decoded_tokens = 0;  // @decode calls (a tool's forced output rides with its call)
  double prefill_seconds = 0;
  double decode_seconds = 0;
};

class Generator {
 public:
  /// Builds the decoder for `params.config()` (batch 1, f32). `params` must outlive the
  /// Generator; its weights are read at every call, so an update between calls is seen.
  static absl::StatusOr<std::unique_ptr<Generator>> Create(const runtime::ParamStore& params,
                                                           const GeneratorOptions& options = {});
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  /// Starts a new sequence with `tokens` (non-empty, each in [0, vocab_size)): forgets the
  /// cache, runs @prefill. Returns the logits [1, T, V]; row t predicts token t + 1.
  absl::StatusOr<runtime::Tensor> Prefill(absl::Span<const int32_t> tokens);
  /// Appends `tokens` (non-empty) to the current sequence through @decode and returns their
  /// logits [1, n, V]. FailedPrecondition before the first Prefill.
  absl::StatusOr<runtime::Tensor> Extend(absl::Span<const int32_t> tokens);
  /// Positions held in the cache (0 before the first Prefill).
  int64_t length() const;

  /// Prefill(prompt), then sample (options.sampling, a Sampler seeded once per call) until
  /// a stop token or max_tokens tokens. Returns the sampled (and tool-forced) tokens, the
  /// stop token excluded.
  /// The sequence may not pass 10 x sequence_len positions (nanochat's rotary cache).
  absl::StatusOr<std::vector<int32_t>> Generate(absl::Span<const int32_t> prompt, const GenerateOptions& options);
  const GenerateStats& last_stats() const;

 private:
  struct Impl;  // the MLIR context, the decoder module, the interpreter and the cache
  explicit Generator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_GENERATION_GENERATOR_H_
