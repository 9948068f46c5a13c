// Implements PythonRandom: the MT19937 reference algorithm with CPython's seeding.
#include "data/tasks/python_random.h"

namespace gpt_sft::data {

PythonRandom::PythonRandom(int64_t seed) {
  uint64_t n = seed < 0 ? static_cast<uint64_t>(-(seed + 1)) + 1 : static_cast<uint64_t>(seed);
  std::vector<uint32_t> key;
  do {
    key.push_back(static_cast<uint32_t>(n & 0xffffffffu));
    n >>= 32;
  } while (n != 0);
  InitByArray(key);
}

void PythonRandom::InitGenrand(uint32_t s) {
  mt_[0] = s;
  for (int i = 1; i < 624; ++i) mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + i;
  index_ = 624;
}

void PythonRandom::InitByArray(const std::vector<uint32_t>& key) {
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
  mt_[0] = 0x80000000u;
}

uint32_t PythonRandom::NextUint32() {
  if (index_ >= 624) {
    for (int k = 0; k < 624; ++k) {
      uint32_t y = (mt_[k] & 0x80000000u) | (mt_[(k + 1) % 624] & 0x7fffffffu);
      mt_[k] = mt_[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    index_ = 0;
  }
  uint32_t y = mt_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t PythonRandom::GetRandBits(int k) {
  if (k <= 0) return 0;
  if (k <= 32) return NextUint32() >> (32 - k);
  // CPython fills 32-bit words from the least significant; the last one is shifted.
  uint64_t low = NextUint32();
  uint64_t high = NextUint32() >> (64 - k);
  return low | (high << 32);
}

uint64_t PythonRandom::RandBelow(uint64_t n) {
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
