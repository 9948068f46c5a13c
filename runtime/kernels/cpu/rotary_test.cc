#include "runtime/kernels/cpu/rotary.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "model/rotary_table.h"
#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::Dot;
using testing::MaxFdError;
using testing::Random;
using testing::Vec;

TEST(Rotary, VjpMatchesFiniteDifferences) {
  const RotaryShape s{2, 5, 3, 6};
  const size_t n = 2 * 5 * 3 * 6;
  std::vector<int32_t> pos = {0, 1, 2, 3, 4, 0, 1, 7, 0, 2};  // restarting positions (packed rows)
  Vec x = Random(n, 7), dy = Random(n, 8), dx(n);
  RotaryGrad(dy.data(), pos.data(), dx.data(), s);
  auto loss = [&](const Vec& xs) { Vec y(n); Rotary(xs.data(), pos.data(), y.data(), s); return Dot(dy, y); };
  EXPECT_LT(MaxFdError(x, loss, dx), testing::kFdTolerance);
}

// y1 = x1 c + x2 s, y2 = -x1 s + x2 c, every element, with c and s nanochat's bf16 table
// entries (model/rotary_table.h), in every dtype: within half a bf16 spacing of the
// cos and sin of angle = pos / 10000^(2j/D), and themselves bf16 values.
TEST(Rotary, ForwardIsTheMinusThetaHalfSplitRotationByTheBf16Table) {
  const RotaryShape s{1, 4, 2, 8};
  const std::vector<int32_t> pos = {0, 5, 1, 300};
  const Vec x = Random(4 * 2 * 8, 9);
  Vec y(x.size());
  Rotary(x.data(), pos.data(), y.data(), s);
  for (int t = 0; t < 4; ++t)
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 4; ++j) {
        const compiler::RotaryCosSin table =
            compiler::RotaryCosSinAt(pos[t], compiler::RotaryInverseFrequency(j, 8, 10000.0));
        const double c = table.cos, sn = table.sin;
        EXPECT_EQ(c, RoundToBf16(float(c)));
        EXPECT_EQ(sn, RoundToBf16(float(sn)));
        const double a = pos[t] / std::pow(10000.0, 2.0 * j / 8);
        EXPECT_NEAR(c, std::cos(a), std::ldexp(1.0, -9));
        EXPECT_NEAR(sn, std::sin(a), std::ldexp(1.0, -9));
        const int o = (t * 2 + h) * 8;
        EXPECT_NEAR(y[o + j], x[o + j] * c + x[o + 4 + j] * sn, 1e-15);
        EXPECT_NEAR(y[o + 4 + j], -x[o + j] * sn + x[o + 4 + j] * c, 1e-15);
      }
  for (int d = 0; d < 16; ++d) EXPECT_EQ(y[d], x[d]);  // position 0 is the identity
  // The VJP is the transposed map (not quite the inverse: the rounded c^2 + s^2 is not 1).
  const Vec dy = Random(x.size(), 11);
  Vec dx(x.size());
  RotaryGrad(dy.data(), pos.data(), dx.data(), s);
  EXPECT_NEAR(Dot(dy, y), Dot(dx, x), 1e-12);
}

// The f32 rotary uses the same bf16 table as the f64 one: their outputs agree to f32 rounding,
// not to the 1e-3 of an unrounded table.
TEST(Rotary, Float32AndFloat64ShareTheBf16Table) {
  const RotaryShape s{1, 3, 1, 16};
  const std::vector<int32_t> pos = {1, 77, 2047};
  const Vec x = Random(3 * 16, 12);
  Vec y64(x.size());
  Rotary(x.data(), pos.data(), y64.data(), s);
  std::vector<float> x32(x.begin(), x.end()), y32(x.size());
  Rotary(x32.data(), pos.data(), y32.data(), s);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y32[i], y64[i], 1e-6) << i;
}

// nanochat's bf16 rotary: the bf16 table, each product and sum rounded; the VJP the same with
// sin negated. Every output is a bf16 value.
TEST(Rotary, Bf16RoundsCosSinEveryProductAndEverySum) {
  const RotaryShape s{1, 3, 2, 8};
  const std::vector<int32_t> pos = {0, 7, 1000};
  const Vec random = Random(3 * 2 * 8, 10);
  std::vector<float> x(random.begin(), random.end()), y(x.size()), dx(x.size());
  for (float& v : x) v = RoundToBf16(v);  // bf16 activations, as autocast hands them over
  Rotary(x.data(), pos.data(), y.data(), s, 10000.0, RotaryRounding::kBf16);
  RotaryGrad(x.data(), pos.data(), dx.data(), s, 10000.0, RotaryRounding::kBf16);
  auto r = [](float v) { return RoundToBf16(v); };
  for (int t = 0; t < 3; ++t)
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 4; ++j) {
        const compiler::RotaryCosSin table =
            compiler::RotaryCosSinAt(pos[t], compiler::RotaryInverseFrequency(j, 8, 10000.0));
        const float c = table.cos, sn = table.sin;
        const int o = (t * 2 + h) * 8;
        const float x1 = x[o + j], x2 = x[o + 4 + j];
        EXPECT_EQ(y[o + j], r(r(x1 * c) + r(x2 * sn)));
        EXPECT_EQ(y[o + 4 + j], r(r(x1 * -sn) + r(x2 * c)));
        EXPECT_EQ(dx[o + j], r(r(x1 * c) + r(x2 * -sn)));
        EXPECT_EQ(dx[o + 4 + j], r(r(x1 * sn) + r(x2 * c)));
      }
  // It is not the f32 rotation rounded once: somewhere the inner roundings show.
  std::vector<float> once(x.size());
  Rotary(x.data(), pos.data(), once.data(), s);
  int differ = 0;
  for (size_t i = 0; i < x.size(); ++i) differ += r(once[i]) != y[i];
  EXPECT_GT(differ, 0);
}

// At a model's head size (vector loops with tails) and in place, with NaN, infinities and
// values that round up past bf16's largest: still each element's formula.
TEST(Rotary, Bf16AtHeadSize128InPlaceIsTheFormula) {
  const RotaryShape s{2, 5, 3, 136};
  const int64_t n = 2 * 5 * 3 * 136, half = 68;
  std::vector<int32_t> pos(10);
  for (int i = 0; i < 10; ++i) pos[i] = 37 * i;
  const Vec random = Random(n, 11);
  std::vector<float> x(random.begin(), random.end());
  for (float& v : x) v = RoundToBf16(v);
  x[5] = std::numeric_limits<float>::quiet_NaN();
  x[half + 9] = std::numeric_limits<float>::infinity();
  x[300] = -3.38e38f;
  for (float sign : {1.0f, -1.0f}) {
    std::vector<float> y = x;
    if (sign > 0) {
      Rotary(y.data(), pos.data(), y.data(), s, 10000.0, RotaryRounding::kBf16);
    } else {
      RotaryGrad(y.data(), pos.data(), y.data(), s, 10000.0, RotaryRounding::kBf16);
    }
    auto r = [](float v) { return RoundToBf16(v); };
    int bad = 0;
    for (int64_t bt = 0; bt < 10; ++bt)
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t j = 0; j < half; ++j) {
          const compiler::RotaryCosSin table =
              compiler::RotaryCosSinAt(pos[bt], compiler::RotaryInverseFrequency(j, 136, 10000.0));
          const float c = table.cos, sn = sign * table.sin;
          const int64_t o = (bt * 3 + h) * 136;
          const float x1 = x[o + j], x2 = x[o + half + j];
          const float want1 = r(r(x1 * c) + r(x2 * sn)), want2 = r(r(-x1 * sn) + r(x2 * c));
          bad += std::memcmp(&want1, &y[o + j], 4) != 0;
          bad += std::memcmp(&want2, &y[o + half + j], 4) != 0;
        }
    EXPECT_EQ(bad, 0) << "sign " << sign;
  }
}

// The tabled kernel (the compiled cpu step's) reads FillRotaryTables' entries instead of
// computing them per token: the same bits as Rotary / RotaryGrad, forward and VJP, with and
// without bf16 rounding, float and double, at packed (restarting) positions.
template <typename T>
void ExpectTablesGiveTheSameBits(RotaryRounding rounding) {
  const RotaryShape s{2, 6, 3, 16};
  const int64_t P = 50, n = s.B * s.T * s.H * s.D;
  const std::vector<int32_t> pos = {0, 1, 2, 49, 3, 4, 0, 1, 17, 0, 2, 3};
  std::vector<float> cos(P * s.D / 2), sin(P * s.D / 2);
  compiler::FillRotaryTables(P, s.D, 10000.0, cos.data(), sin.data());
  const Vec random = Random(n, 11);
  const std::vector<T> x(random.begin(), random.end());
  for (const bool grad : {false, true}) {
    std::vector<T> computed(n), tabled(n);
    if (grad) {
      RotaryGrad(x.data(), pos.data(), computed.data(), s, 10000.0, rounding);
    } else {
      Rotary(x.data(), pos.data(), computed.data(), s, 10000.0, rounding);
    }
    RotaryFromTables(x.data(), pos.data(), cos.data(), sin.data(), tabled.data(), s, grad, rounding);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(std::memcmp(&computed[i], &tabled[i], sizeof(T)), 0)
          << (grad ? "grad" : "forward") << " element " << i << ": " << computed[i] << " vs " << tabled[i];
    }
  }
}

TEST(Rotary, FromTablesIsBitIdenticalFloat) { ExpectTablesGiveTheSameBits<float>(RotaryRounding::kNone); }
TEST(Rotary, FromTablesIsBitIdenticalDouble) { ExpectTablesGiveTheSameBits<double>(RotaryRounding::kNone); }
TEST(Rotary, FromTablesIsBitIdenticalBf16) { ExpectTablesGiveTheSameBits<float>(RotaryRounding::kBf16); }

}  // namespace
}  // namespace gpt_sft::runtime::kernels
