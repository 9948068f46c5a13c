#include "trainer/generation/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gpt_sft::trainer {

absl::Status SamplingOptions::Validate() const {
  if (!(temperature >= 0.0) || !std::isfinite(temperature)) {
    return absl::InvalidArgumentError(absl::StrCat("--temperature must be >= 0, got ", temperature));
  }
  if (top_k < 0) return absl::InvalidArgumentError(absl::StrCat("--top_k must be >= 0 (0: no limit), got ", top_k));
  return absl::OkStatus();
}

Sampler::Sampler(const SamplingOptions& options) : options_(options), rng_(options.seed) {}

int32_t Argmax(absl::Span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

int32_t Sampler::Next(absl::Span<const float> logits) {
  if (options_.temperature == 0.0) return Argmax(logits);
  const int64_t V = static_cast<int64_t>(logits.size());
  const int64_t k = options_.top_k > 0 ? std::min<int64_t>(options_.top_k, V) : V;
  // Candidates in descending logit order, ties by the smaller id (a deterministic order).
  std::vector<int32_t> ids(V);
  std::iota(ids.begin(), ids.end(), 0);
  auto before = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), before);
  ids.resize(k);
  std::vector<double> weights(k);
  const double top = logits[ids[0]];
  double total = 0;
  for (int64_t i = 0; i < k; ++i) total += weights[i] = std::exp((logits[ids[i]] - top) / options_.temperature);
  double u = rng_.NextDouble() * total;
  for (int64_t i = 0; i < k; ++i) {
    if (u < weights[i]) return ids[i];
    u -= weights[i];
  }
  return ids[k - 1];  // u landed on the rounding slack past the last weight
}

}  // namespace gpt_sft::trainer
