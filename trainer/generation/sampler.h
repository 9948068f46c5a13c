// Sampler: nanochat's next-token rule (Engine.sample_next_token, NANOCHAT.md 1.8 and 9):
// temperature 0 takes the argmax (the first index of the largest logit); otherwise keep the
// top_k largest logits (all of them when top_k is 0), divide by the temperature, softmax,
// and draw one from the distribution with a generator seeded by `seed`. The draws are our
// own (SplitMix64 words, 53-bit uniforms, inverse CDF over the kept tokens in descending
// logit order), identical on every machine; they do not reproduce torch's multinomial.
// Same seed and same logits: same tokens.
#ifndef GPT_SFT_TRAINER_GENERATION_SAMPLER_H_
#define GPT_SFT_TRAINER_GENERATION_SAMPLER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/split_mix64.h"

namespace gpt_sft::trainer {

struct SamplingOptions {
  double temperature = 0.0;  // >= 0; 0: greedy (argmax)
  int top_k = 0;             // >= 0; 0: the whole vocabulary (nanochat's chat default: 50)
  uint64_t seed = 42;        // nanochat's default

  /// Errors name the option at fault (--temperature, --top_k).
  absl::Status Validate() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplingOptions& options);

  /// The next token given the logits [V] of the last position (V >= 1).
  int32_t Next(absl::Span<const float> logits);

 private:
  SamplingOptions options_;
  base::SplitMix64 rng_;  // the draws, seeded with options_.seed
};

/// The first index of the largest value (torch.argmax's tie rule).
int32_t Argmax(absl::Span<const float> logits);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_GENERATION_SAMPLER_H_
