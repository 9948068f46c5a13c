// CPython's random.Random, bit for bit: nanochat's task mixture and synthetic tasks are
// defined by it. MT19937 seeded through init_by_array (so std::mt19937(42) differs).
#ifndef GPT_SFT_DATA_TASKS_PYTHON_RANDOM_H_
#define GPT_SFT_DATA_TASKS_PYTHON_RANDOM_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpt_sft::data {

class PythonRandom {
 public:
  /// random.Random(seed) for an int seed: init_by_array over |seed|'s 32-bit words.
  explicit PythonRandom(int64_t seed);

  uint32_t NextUint32();
  /// getrandbits(k), k in [0, 64].
  uint64_t GetRandBits(int k);
  /// _randbelow(n): rejection sampling on getrandbits(n.bit_length()); n > 0.
  uint64_t RandBelow(uint64_t n);
  /// random(): 53-bit float in [0, 1).
  double Random();

  template <typename T>
  const T& Choice(const std::vector<T>& v) { return v[RandBelow(v.size())]; }

  /// shuffle(x): for i from n-1 down to 1, swap x[i] with x[randbelow(i+1)].
  template <typename T>
  void Shuffle(std::vector<T>* v) {
    for (size_t i = v->size(); i-- > 1;) std::swap((*v)[i], (*v)[RandBelow(i + 1)]);
  }

 private:
  void InitGenrand(uint32_t s);
  void InitByArray(const std::vector<uint32_t>& key);

  std::array<uint32_t, 624> mt_;
  int index_ = 625;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_PYTHON_RANDOM_H_
