#include "data/collate/synthetic_conversations.h"

#include "base/split_mix64.h"

namespace gpt_sft::data {
namespace {

// Uniform in [lo, hi] from SplitMix64 (the same draws on every machine); the modulo bias is
// irrelevant for synthetic lengths.
int Uniform(base::SplitMix64& rng, int lo, int hi) { return lo + static_cast<int>(rng.Next() % (hi - lo + 1)); }

int DrawLength(base::SplitMix64& rng) {
  const int bucket = Uniform(rng, 0, 99);
  if (bucket < 80) return Uniform(rng, 100, 600);
  if (bucket < 95) return Uniform(rng, 601, 1500);
  return Uniform(rng, 1501, 3000);
}

}  // namespace

std::vector<RenderedConversation> SyntheticConversations(int count, uint64_t seed) {
  base::SplitMix64 rng(seed);
  std::vector<RenderedConversation> out(count);
  for (RenderedConversation& c : out) {
    const int n = DrawLength(rng);
    const int prompt = n * Uniform(rng, 20, 60) / 100;  // includes <|bos|>
    c.ids.resize(n);
    c.mask.resize(n);
    for (int i = 0; i < n; ++i) {
      c.ids[i] = static_cast<int32_t>(rng.Next() % kSyntheticBos);
      c.mask[i] = i >= prompt ? 1 : 0;
    }
    c.ids[0] = kSyntheticBos;
    c.mask[0] = 0;
    c.ids[n - 1] = kSyntheticAssistantEnd;
    c.mask[n - 1] = 1;
  }
  return out;
}

}  // namespace gpt_sft::data
