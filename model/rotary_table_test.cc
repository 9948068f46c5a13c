#include "model/rotary_table.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::compiler {
namespace {

bool IsBf16Value(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return (bits & 0xffffu) == 0;
}

// Worked by hand: angle 1 (position 1, pair 0: inv_freq 1). cos 1 = 0.5403023 lies between the
// bf16 neighbours 138/256 and 139/256 (spacing 2^-8 in [0.5, 1)), nearer 138/256 = 0.5390625;
// sin 1 = 0.8414710 between 215/256 and 216/256, nearer 215/256 = 0.83984375. The unrounded
// fp32 table this replaced held 0.5403023 and 0.8414710.
TEST(RotaryTable, EntriesAreCosAndSinRoundedToBf16) {
  EXPECT_EQ(RotaryInverseFrequency(0, 128, 10000.0), 1.0f);
  const RotaryCosSin one = RotaryCosSinAt(1, 1.0f);
  EXPECT_EQ(one.cos, 0.5390625f);
  EXPECT_EQ(one.sin, 0.83984375f);
  const RotaryCosSin zero = RotaryCosSinAt(0, 0.5f);
  EXPECT_EQ(zero.cos, 1.0f);
  EXPECT_EQ(zero.sin, 0.0f);
}

// 2j/D = 1/2 at the middle pair: 10000^(1/2) = 100 exactly, inv_freq = fp32(1/100).
TEST(RotaryTable, InverseFrequencyIsTheFp32Reciprocal) {
  EXPECT_EQ(RotaryInverseFrequency(32, 128, 10000.0), 1.0f / 100.0f);
  EXPECT_EQ(RotaryInverseFrequency(4, 16, 10000.0), 1.0f / 100.0f);
  EXPECT_EQ(RotaryInverseFrequency(1, 4, 100.0), 1.0f / 10.0f);
}

// The angle is the fp32 product position * inv_freq, not a double one: with inv_freq fp32(1/100)
// and positions near 20000 the two differ by up to 8e-6 rad (half an fp32 spacing at 200),
// which now and then moves cos across a bf16 rounding boundary; the first such position is
// searched for, and the table must side with the fp32 angle there.
TEST(RotaryTable, TheAngleIsAnFp32Product) {
  const float inv_freq = RotaryInverseFrequency(32, 128, 10000.0);
  int checked = 0;
  for (int64_t p = 1; p < 20480 && checked == 0; ++p) {
    const double fp32_angle = double(float(p) * inv_freq), double_angle = double(p) * double(inv_freq);
    const RotaryCosSin entry = RotaryCosSinAt(p, inv_freq);
    auto bf16 = [](double v) {  // nearest bf16 of v, computed independently of round_to_bf16.h
      int e;
      std::frexp(v, &e);
      const double ulp = std::ldexp(1.0, e - 8);
      return float(std::nearbyint(v / ulp) * ulp);
    };
    if (bf16(std::cos(fp32_angle)) == bf16(std::cos(double_angle))) continue;
    EXPECT_EQ(entry.cos, bf16(std::cos(fp32_angle))) << "position " << p;
    ++checked;
  }
  EXPECT_EQ(checked, 1) << "no position where the fp32 and double angles round apart";
}

// Every entry of a whole table is a bf16 value within half a bf16 spacing of the exact cos/sin
// of its fp32 angle, and FillRotaryTables is RotaryCosSinAt row by row.
TEST(RotaryTable, AWholeTableIsBf16WithinHalfASpacing) {
  const int64_t positions = 2048, D = 64, half = D / 2;
  std::vector<float> cos(positions * half), sin(positions * half);
  FillRotaryTables(positions, D, 10000.0, cos.data(), sin.data());
  for (int64_t j = 0; j < half; ++j) {
    const float inv_freq = RotaryInverseFrequency(j, D, 10000.0);
    for (int64_t p = 0; p < positions; ++p) {
      const size_t i = p * half + j;
      const RotaryCosSin entry = RotaryCosSinAt(p, inv_freq);
      ASSERT_EQ(cos[i], entry.cos) << p << "," << j;
      ASSERT_EQ(sin[i], entry.sin) << p << "," << j;
      const double angle = double(float(p) * inv_freq);
      for (auto [value, exact] : {std::pair{cos[i], std::cos(angle)}, std::pair{sin[i], std::sin(angle)}}) {
        ASSERT_TRUE(IsBf16Value(value)) << p << "," << j;
        // bf16 keeps 8 significant bits: half a spacing is at most 2^-8 of the magnitude.
        ASSERT_LE(std::abs(value - exact), std::ldexp(std::abs(exact), -8) + 1e-30) << p << "," << j;
      }
    }
  }
}

}  // namespace
}  // namespace gpt_sft::compiler
