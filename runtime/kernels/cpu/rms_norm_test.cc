#include "runtime/kernels/cpu/rms_norm.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::Dot;
using testing::MaxFdError;
using testing::Random;
using testing::Vec;

TEST(RmsNorm, VjpMatchesFiniteDifferences) {
  const int64_t rows = 5, dim = 7;
  Vec x = Random(rows * dim, 5), dy = Random(rows * dim, 6), dx(rows * dim);
  RmsNormGrad(x.data(), dy.data(), dx.data(), rows, dim);
  auto loss = [&](const Vec& xs) { Vec y(xs.size()); RmsNorm(xs.data(), y.data(), rows, dim); return Dot(dy, y); };
  EXPECT_LT(MaxFdError(x, loss, dx), testing::kFdTolerance);
}

// The batched rows (their sums four rows side by side on AVX-512) give the row kernels' very
// bits, at row counts around the batch of four and dims with and without a tail of eight,
// in place too.
TEST(RmsNorm, RowsGiveTheRowKernelsBits) {
  const float eps = float(kRmsNormEps);
  for (int64_t dim : {1, 7, 8, 128, 131, 256}) {
    for (int64_t rows : {1, 3, 4, 5, 17, 37}) {
      SCOPED_TRACE(::testing::Message() << rows << " rows of " << dim);
      const Vec xd = Random(rows * dim, 11), dyd = Random(rows * dim, 12);
      const std::vector<float> x(xd.begin(), xd.end()), dy(dyd.begin(), dyd.end());
      std::vector<float> want_y(x.size()), want_dx(x.size()), y(x.size()), dx(x.size());
      for (int64_t r = 0; r < rows; ++r) {
        RmsNormRow(x.data() + r * dim, want_y.data() + r * dim, dim, eps);
        RmsNormGradRow(x.data() + r * dim, dy.data() + r * dim, want_dx.data() + r * dim, dim, eps);
      }
      RmsNormRows(x.data(), y.data(), rows, dim, eps);
      RmsNormGradRows(x.data(), dy.data(), dx.data(), rows, dim, eps);
      ASSERT_EQ(std::memcmp(want_y.data(), y.data(), y.size() * sizeof(float)), 0);
      ASSERT_EQ(std::memcmp(want_dx.data(), dx.data(), dx.size() * sizeof(float)), 0);
      std::vector<float> in_place = x, in_place_dy = dy;
      RmsNormRows(in_place.data(), in_place.data(), rows, dim, eps);
      RmsNormGradRows(x.data(), in_place_dy.data(), in_place_dy.data(), rows, dim, eps);
      ASSERT_EQ(std::memcmp(want_y.data(), in_place.data(), y.size() * sizeof(float)), 0);
      ASSERT_EQ(std::memcmp(want_dx.data(), in_place_dy.data(), dx.size() * sizeof(float)), 0);
    }
  }
}

TEST(RmsNorm, ForwardIsTheDefinitionWithEps2ToMinus23) {
  EXPECT_EQ(kRmsNormEps, std::ldexp(1.0, -23));
  const int64_t rows = 300, dim = 19;  // several pool chunks, a dim not a multiple of 8
  Vec x = Random(rows * dim, 7), y(rows * dim);
  RmsNorm(x.data(), y.data(), rows, dim);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < dim; ++i) ss += x[r * dim + i] * x[r * dim + i];
    for (int64_t i = 0; i < dim; ++i)
      ASSERT_NEAR(y[r * dim + i], x[r * dim + i] / std::sqrt(ss / dim + kRmsNormEps), 1e-13);
  }
  // A zero row stays zero (eps keeps the rsqrt finite); float agrees with double.
  std::vector<float> z(dim, 0.f), zy(dim, 1.f);
  RmsNorm(z.data(), zy.data(), 1, dim);
  for (float v : zy) EXPECT_EQ(v, 0.f);
  std::vector<float> xf(x.begin(), x.end()), yf(xf.size());
  RmsNorm(xf.data(), yf.data(), rows, dim);
  for (size_t i = 0; i < yf.size(); ++i) ASSERT_NEAR(yf[i], y[i], 1e-6);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
