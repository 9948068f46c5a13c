#include "runtime/kernels/cpu/rms_norm.h"

#include <cmath>
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
