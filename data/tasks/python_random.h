// CPython's random.Random, bit for bit: nanochat's task mixture and synthetic tasks are
// defined by it. MT19937 seeded through init_by_array (so std::mt19937(42) differs).
#ifndef GPT_SFT_DATA_TASKS_PYTHON_RANDOM_H_
#define GPT_SFT_DATA_TASKS_PYTHON_RANDOM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpt_sft::data {

/// Not thread-safe; cheap to construct (one init_by_array, ~2.5K word operations).
class PythonRandom {
 public:
  /// random.Random(seed) for an int seed: init_by_array over the 32-bit words of |seed|,
  /// least significant first ([0] for 0). So Random(-5) == Random(5), as in CPython.
  explicit PythonRandom(int64_t seed);

  /// random.Random(n) for any non-negative int n = sum(words[i] << 32*i): CPython strips
  /// the high zero words (keeping one), so {5, 0} seeds like {5}.
  static PythonRandom FromWords(std::vector<uint32_t> words);

  /// One MT19937 output (genrand_uint32).
  uint32_t NextUint32();
  /// getrandbits(k) for k in [0, 64]: 32-bit words filled least significant first, the
  /// last one keeping its top (k mod 32) bits.
  uint64_t GetRandBits(int k);
  /// _randbelow(n): k = n.bit_length(), redraw getrandbits(k) until it is < n. n must be
  /// > 0 (CPython would loop forever on 0; this returns 0).
  uint64_t RandBelow(uint64_t n);
  /// random(): (a >> 5, b >> 6) of two outputs -> (a * 2^26 + b) / 2^53, in [0, 1).
  double Random();

  /// choice(seq) = seq[randbelow(len(seq))]; `v` must not be empty.
  template <typename Container>
  const auto& Choice(const Container& v) { return v[RandBelow(v.size())]; }

  /// shuffle(x): for i from n-1 down to 1, swap x[i] with x[randbelow(i+1)].
  template <typename Container>
  void Shuffle(Container* v) {
    using std::swap;
    for (size_t i = v->size(); i-- > 1;) swap((*v)[i], (*v)[RandBelow(i + 1)]);
  }

 private:
  PythonRandom() = default;
  void InitGenrand(uint32_t s);
  void InitByArray(const std::vector<uint32_t>& key);

  std::array<uint32_t, 624> mt_{};
  int index_ = 624;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_PYTHON_RANDOM_H_
