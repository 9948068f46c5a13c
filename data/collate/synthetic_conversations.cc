#include "data/collate/synthetic_conversations.h"

namespace gpt_sft::data {
namespace {

// SplitMix64: a tiny generator whose output is fixed by its definition, unlike the std
// distributions, whose algorithms vary between standard libraries.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi]; the modulo bias is irrelevant for synthetic lengths.
  int Uniform(int lo, int hi) { return lo + static_cast<int>(Next() % (hi - lo + 1)); }

 private:
  uint64_t state_;
};

int DrawLength(SplitMix64& rng) {
  const int bucket = rng.Uniform(0, 99);
  if (bucket < 80) return rng.Uniform(100, 600);
  if (bucket < 95) return rng.Uniform(601, 1500);
  return rng.Uniform(1501, 3000);
}

}  // namespace

std::vector<RenderedConversation> SyntheticConversations(int count, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<RenderedConversation> out(count);
  for (RenderedConversation& c : out) {
    const int n = DrawLength(rng);
    const int prompt = n * rng.Uniform(20, 60) / 100;  // includes <|bos|>
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
