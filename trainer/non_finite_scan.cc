#include "trainer/non_finite_scan.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gpt_sft::trainer {

int64_t FirstNonFiniteIndex(const float* data, int64_t n) {
  // Blocks without a branch per element (the compiler vectorises the exponent test); the
  // element is located only in the block that holds one.
  constexpr int64_t kBlock = 4096;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = std::min(n, start + kBlock);
    uint32_t any = 0;
    for (int64_t i = start; i < end; ++i) {
      uint32_t bits;
      std::memcpy(&bits, data + i, sizeof(bits));
      any |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    }
    if (any == 0) continue;
    for (int64_t i = start; i < end; ++i) {
      if (!std::isfinite(data[i])) return i;
    }
  }
  return -1;
}

std::optional<NonFiniteValue> FindNonFinite(const std::string& tensor, const float* data, int64_t n) {
  const int64_t i = FirstNonFiniteIndex(data, n);
  if (i < 0) return std::nullopt;
  return NonFiniteValue{tensor, i, data[i]};
}

}  // namespace gpt_sft::trainer
