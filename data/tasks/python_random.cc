// Implements PythonRandom: the MT19937 reference algorithm (Matsumoto and Nishimura's
// mt19937ar.c, which CPython's _randommodule.c follows) with CPython's seeding.
#include "data/tasks/python_random.h"

#include <algorithm>

namespace gpt_sft::data {

PythonRandom::PythonRandom(int64_t seed) {
  // |seed| without overflow at INT64_MIN.
  uint64_t n = seed < 0 ? ~static_cast<uint64_t>(seed) + 1 : static_cast<uint64_t>(seed);
  InitByArray({static_cast<uint32_t>(n), static_cast<uint32_t>(n >> 32)});
}

PythonRandom PythonRandom::FromWords(std::vector<uint32_t> words) {
  PythonRandom r;
  r.InitByArray(words);
  return r;
}

void PythonRandom::InitGenrand(uint32_t s) {
  mt_[0] = s;
  for (uint32_t i = 1; i < 624; ++i) mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + i;
  index_ = 624;
}

void PythonRandom::InitByArray(const std::vector<uint32_t>& words) {
  // CPython's key: the minimal number of words, at least one.
  std::vector<uint32_t> key = words;
  while (key.size() > 1 && key.back() == 0) key.pop_back();
  if (key.empty()) key.push_back(0);

  InitGenrand(19650218u);
  size_t i = 1, j = 0;
  for (size_t k = std::max<size_t>(624, key.size()); k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525u)) + key[j] + static_cast<uint32_t>(j);
    if (++i >= 624) mt_[0] = mt_[623], i = 1;
    if (++j >= key.size()) j = 0;
  }
  for (size_t k = 623; k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
    if (++i >= 624) mt_[0] = mt_[623], i = 1;
  }
  mt_[0] = 0x80000000u;  // the MSB is 1, so the state is never all zero
  index_ = 624;
}

uint32_t PythonRandom::NextUint32() {
  if (index_ >= 624) {  // regenerate the whole block
    for (int k = 0; k < 624; ++k) {
      const uint32_t y = (mt_[k] & 0x80000000u) | (mt_[(k + 1) % 624] & 0x7fffffffu);
      mt_[k] = mt_[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    index_ = 0;
  }
  uint32_t y = mt_[index_++];  // tempering
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t PythonRandom::GetRandBits(int k) {
  if (k <= 0) return 0;
  if (k <= 32) return NextUint32() >> (32 - k);
  const uint64_t low = NextUint32();
  const uint64_t high = NextUint32() >> (64 - std::min(k, 64));
  return low | (high << 32);
}

uint64_t PythonRandom::RandBelow(uint64_t n) {
  if (n == 0) return 0;
  int k = 0;
  while (k < 64 && (n >> k) != 0) ++k;  // n.bit_length()
  uint64_t r = GetRandBits(k);
  while (r >= n) r = GetRandBits(k);
  return r;
}

double PythonRandom::Random() {
  const uint32_t a = NextUint32() >> 5, b = NextUint32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

}  // namespace gpt_sft::data
