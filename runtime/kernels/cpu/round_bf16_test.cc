#include "runtime/kernels/cpu/round_bf16.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::kernels {
namespace {

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
uint32_t Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

TEST(RoundToBf16, Bf16ValuesAreKept) {
  for (float v : {0.0f, -0.0f, 1.0f, -2.5f, 0.0078125f, 3.0e38f, 1.0e-40f}) {
    const float b = FromBits(Bits(v) & 0xffff0000u);
    EXPECT_EQ(Bits(RoundToBf16(b)), Bits(b)) << v;
  }
}

TEST(RoundToBf16, NearestWithTiesToEven) {
  // bf16 has 7 mantissa bits: between 1 and 2 its step is 2^-7.
  const float step = std::ldexp(1.0f, -7);
  EXPECT_EQ(RoundToBf16(1.0f + 0.4f * step), 1.0f);
  EXPECT_EQ(RoundToBf16(1.0f + 0.6f * step), 1.0f + step);
  EXPECT_EQ(RoundToBf16(1.0f + 0.5f * step), 1.0f);                // tie: 1.0 is even
  EXPECT_EQ(RoundToBf16(1.0f + 1.5f * step), 1.0f + 2.0f * step);  // tie: 1 + 2 steps is even
  EXPECT_EQ(RoundToBf16(-(1.0f + 0.6f * step)), -(1.0f + step));
  EXPECT_EQ(RoundToBf16(3.14159265f), 3.140625f);
}

TEST(RoundToBf16, OverflowInfinityAndNaN) {
  EXPECT_EQ(RoundToBf16(std::numeric_limits<float>::max()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(RoundToBf16(-std::numeric_limits<float>::infinity()), -std::numeric_limits<float>::infinity());
  const float nan = RoundToBf16(FromBits(0x7f800001u));  // a signalling NaN whose payload sits in the low bits
  EXPECT_TRUE(std::isnan(nan));
  EXPECT_EQ(Bits(nan) & 0xffffu, 0u);
}

TEST(RoundBf16, EveryElementInPlace) {
  std::vector<float> x(100000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.001f * i) * 100.0f;
  std::vector<float> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) expected[i] = RoundToBf16(x[i]);
  RoundBf16(x.data(), x.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(x, expected);
}

// The vector path (AVX-512 or AVX2 by the ISA level: the test runs under every cap) and the
// scalar tail give RoundToBf16's bits on
// every kind of input: ties both ways, overflow to inf, NaNs (payloads kept, quieted),
// subnormals, signed zeros; at lengths that leave tails of every size.
TEST(RoundBf16, InPlaceMatchesTheScalarRoundingBitForBit) {
  std::vector<uint32_t> patterns = {0x00000000u, 0x80000000u, 0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x7f7fffffu,
                                    0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7f800001u, 0xffc12345u, 0x7fbfffffu,
                                    0x00000001u, 0x807fffffu, 0x3f7fffffu};
  for (uint32_t i = 0; i < 5000; ++i) patterns.push_back(i * 2654435761u);  // spread over all patterns
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(7), int64_t(8), int64_t(9), int64_t(15), int64_t(16), int64_t(17),
                    int64_t(patterns.size())}) {
    std::vector<float> x(n), expected(n);
    for (int64_t i = 0; i < n; ++i) x[i] = FromBits(patterns[i]);
    for (int64_t i = 0; i < n; ++i) expected[i] = RoundToBf16(x[i]);
    RoundBf16InPlace(x.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(Bits(x[i]), Bits(expected[i])) << "n " << n << " element " << i << " pattern " << std::hex << patterns[i];
    }
  }
}

// Every sign, exponent and top mantissa bits (all 2^16 top halves) with the low halves where
// rounding turns: below, at and above the tie, either kept lsb, and the NaN payloads there;
// copied (RoundBf16Into) and in place.
TEST(RoundBf16, EveryTopHalfAtEveryTurningLowHalf) {
  constexpr uint32_t kLow[] = {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, 0x4000u, 0xc000u};
  std::vector<float> x, expected;
  for (uint32_t top = 0; top < 0x10000u; ++top)
    for (uint32_t low : kLow) x.push_back(FromBits(top << 16 | low));
  for (float v : x) expected.push_back(RoundToBf16(v));
  std::vector<float> copy(x.size());
  RoundBf16Into(x.data(), copy.data(), int64_t(x.size()) - 3);  // a tail of 5 past the 8s and 16s
  for (size_t i = 0; i + 3 < x.size(); ++i) ASSERT_EQ(Bits(copy[i]), Bits(expected[i])) << std::hex << Bits(x[i]);
  RoundBf16InPlace(x.data(), int64_t(x.size()));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(Bits(x[i]), Bits(expected[i])) << i;
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
