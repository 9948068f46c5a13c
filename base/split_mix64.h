// SplitMix64 (Steele, Lea, Flood 2014): a tiny generator whose output is fixed by its
// definition. We use it wherever a draw must be the same on every machine (ParamStore's
// init, synthetic conversations, the sampler): std's distributions are implementation-
// defined, so their draws differ between standard libraries. Pinned by split_mix64_test.cc
// and, through its users, by the ParamStore init checksum.
#ifndef GPT_SFT_BASE_SPLIT_MIX64_H_
#define GPT_SFT_BASE_SPLIT_MIX64_H_

#include <cstdint>

namespace gpt_sft::base {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  /// The next 64-bit word.
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  /// The top 53 bits of the next word as a double in [0, 1).
  double NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_SPLIT_MIX64_H_
