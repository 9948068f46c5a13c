#include "runtime/kernels/cpu/vec_math.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::kernels {
namespace {

// RowSums gives SumOfSquares's and Dot's very doubles per row (memcmp), at row counts around
// its batch of four, lengths with and without a tail of eight, rows at a stride.
TEST(VecMath, RowSumsAreSumOfSquaresAndDotPerRow) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> exponent(-30, 30);  // so that the order of the sums shows in their bits
  for (int64_t n : {1, 7, 8, 9, 128, 131}) {
    for (int64_t rows : {1, 4, 5, 9}) {
      const int64_t ld = n + 3;
      std::vector<float> x(rows * ld), y(rows * ld);
      for (float& v : x) v = std::ldexp(normal(rng), exponent(rng));
      for (float& v : y) v = std::ldexp(normal(rng), exponent(rng));
      std::vector<double> xx(rows), yx(rows), only_xx(rows);
      RowSums(x.data(), y.data(), ld, rows, n, xx.data(), yx.data());
      RowSums<float>(x.data(), nullptr, ld, rows, n, only_xx.data(), nullptr);
      for (int64_t r = 0; r < rows; ++r) {
        const double want_xx = SumOfSquares(x.data() + r * ld, n), want_yx = Dot(y.data() + r * ld, x.data() + r * ld, n);
        EXPECT_EQ(std::memcmp(&want_xx, &xx[r], sizeof(double)), 0) << "n " << n << " row " << r << " of " << rows;
        EXPECT_EQ(std::memcmp(&want_xx, &only_xx[r], sizeof(double)), 0) << "n " << n << " row " << r;
        EXPECT_EQ(std::memcmp(&want_yx, &yx[r], sizeof(double)), 0) << "n " << n << " row " << r << " of " << rows;
      }
    }
  }
}

// Where a tail element lands among the eight partial sums shows in the bits: with partial
// sums 1 and 2^-53 and a tail product 2^-53, adding the tail to partial sum 0 (Dot's order)
// gives 1 (1 + 2^-53 ties to even), to partial sum 1 gives 1 + 2^-52.
TEST(VecMath, RowSumsAddTheTailToPartialSumZero) {
  const int64_t rows = 4, n = 9;
  std::vector<float> x(rows * n, 1.f), y(rows * n, 0.f);
  for (int64_t r = 0; r < rows; ++r) {
    y[r * n + 0] = 1.f;
    y[r * n + 1] = std::ldexp(1.f, -53);
    y[r * n + 8] = std::ldexp(1.f, -53);
  }
  std::vector<double> xx(rows), yx(rows);
  RowSums(x.data(), y.data(), n, rows, n, xx.data(), yx.data());
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_EQ(yx[r], Dot(y.data() + r * n, x.data() + r * n, n));
    EXPECT_EQ(yx[r], 1.0) << "row " << r;
  }
}

// The float exp across the range softmax uses (x - max <= 0) and a little above, every
// length from 0 to 19 so the vector body and the tail are both used.
TEST(VecMath, FloatExpIsAccurateAndUnderflowsToZero) {
  std::vector<float> x;
  for (double v = -100.0; v <= 10.0; v += 0.01) x.push_back(float(v));
  std::vector<float> out(x.size());
  const double sum = ExpShifted(x.data(), int64_t(x.size()), 0.f, 1.f, out.data());
  double want_sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp(double(x[i]));
    want_sum += x[i] < -87.33654f ? 0.0 : want;
    if (x[i] < -87.33654f) {
      ASSERT_EQ(out[i], 0.f) << x[i];
    } else if (want > 1e-37) {  // normal range: a few ulp
      ASSERT_NEAR(out[i] / want, 1.0, 4e-7) << x[i];
    }
  }
  EXPECT_NEAR(sum / want_sum, 1.0, 1e-7);
  EXPECT_NEAR(ExpShiftedSum(x.data(), int64_t(x.size()), 0.f) / want_sum, 1.0, 1e-7);
  const float minus_inf[3] = {-std::numeric_limits<float>::infinity(), 0.f, -std::numeric_limits<float>::infinity()};
  float e[3];
  EXPECT_NEAR(ExpShifted(minus_inf, 3, 0.f, 2.f, e), 1.0, 1e-7);
  EXPECT_EQ(e[0], 0.f);
  EXPECT_NEAR(e[1], 2.f, 1e-6);
  EXPECT_EQ(e[2], 0.f);
  for (int n = 0; n < 20; ++n) {
    std::vector<float> y(n, 0.5f), o(n);
    EXPECT_NEAR(ExpShifted(y.data(), n, 1.f, 3.f, o.data()), n * std::exp(-0.5), 1e-5) << n;
    for (float v : o) ASSERT_NEAR(v, 3 * std::exp(-0.5), 1e-6);
  }
}

TEST(VecMath, DoubleUsesStdExp) {
  const double x[4] = {-1.0, 0.0, 2.0, -std::numeric_limits<double>::infinity()};
  double out[4];
  const double sum = ExpShifted(x, 4, 2.0, 0.5, out);
  EXPECT_DOUBLE_EQ(out[0], 0.5 * std::exp(-3.0));
  EXPECT_DOUBLE_EQ(out[2], 0.5);
  EXPECT_EQ(out[3], 0.0);
  EXPECT_DOUBLE_EQ(sum, std::exp(-3.0) + std::exp(-2.0) + 1.0);
}

// Relative error against double tanh from 1e-30 to past the clamp, both signs, and the
// scales softcap uses.
TEST(VecMath, FloatTanhIsAccurateEverywhere) {
  std::vector<float> x;
  for (float v = 1e-30f; v < 30.f; v *= 1.01f) {
    x.push_back(v);
    x.push_back(-v);
  }
  x.push_back(0.f);
  std::vector<float> out(x.size());
  ScaledTanh(x.data(), int64_t(x.size()), 1.f, 1.f, out.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::tanh(double(x[i]));
    ASSERT_NEAR(out[i], want, 4e-7 * std::abs(want)) << x[i];
  }
  ScaledTanh(x.data(), int64_t(x.size()), 1.f / 15.f, 15.f, out.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = 15.0 * std::tanh(double(x[i]) / 15.0);
    ASSERT_NEAR(out[i], want, 6e-7 * std::abs(want)) << x[i];
  }
}

TEST(VecMath, MaxAndDots) {
  std::vector<float> x(37);
  for (int i = 0; i < 37; ++i) x[i] = float((i * 7) % 37) - 20.f;  // a permutation of -20 .. 16
  EXPECT_EQ(MaxOf(x.data(), 37), 16.f);
  EXPECT_EQ(MaxOf(x.data(), 3), -6.f);  // -20, -13, -6: the tail alone
  std::vector<double> a(19), b(19);
  double want = 0, want_sq = 0;
  for (int i = 0; i < 19; ++i) {
    a[i] = 0.5 * i - 3;
    b[i] = 1.0 / (i + 1);
    want += a[i] * b[i];
    want_sq += a[i] * a[i];
  }
  EXPECT_NEAR(Dot(a.data(), b.data(), 19), want, 1e-12);
  EXPECT_NEAR(SumOfSquares(a.data(), 19), want_sq, 1e-12);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
