#include "runtime/kernels/cpu/pointwise.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::Dot;
using testing::kFdTolerance;
using testing::MaxFdError;
using testing::Random;
using testing::Vec;

TEST(Pointwise, ReluSquare) {
  Vec x = Random(37, 1), dy = Random(37, 2), dx(37), y(37);
  for (double& v : x) v += (v > 0 ? 0.05 : -0.05);  // keep away from the kink at 0
  ReluSquareGrad(x.data(), dy.data(), dx.data(), 37);
  auto loss = [&](const Vec& xs) { Vec o(37); ReluSquare(xs.data(), o.data(), 37); return Dot(dy, o); };
  EXPECT_LT(MaxFdError(x, loss, dx), kFdTolerance);
  const double xs[3] = {-2.0, 0.0, 3.0};
  double ys[3];
  ReluSquare(xs, ys, 3);
  EXPECT_EQ(ys[0], 0.0);
  EXPECT_EQ(ys[1], 0.0);
  EXPECT_EQ(ys[2], 9.0);
}

TEST(Pointwise, Softcap) {
  Vec x = Random(29, 3, 40.0), dy = Random(29, 4), y(29), dx(29);
  Softcap(x.data(), y.data(), 29, 15.0);
  SoftcapGrad(y.data(), dy.data(), dx.data(), 29, 15.0);
  auto loss = [&](const Vec& xs) { Vec o(29); Softcap(xs.data(), o.data(), 29, 15.0); return Dot(dy, o); };
  EXPECT_LT(MaxFdError(x, loss, dx), kFdTolerance);
  for (int i = 0; i < 29; ++i) EXPECT_NEAR(y[i], 15.0 * std::tanh(x[i] / 15.0), 1e-12);
}

TEST(Pointwise, AddAndMul) {
  const int64_t n = 23;
  Vec a = Random(n, 5), b = Random(n, 6), dy = Random(n, 7), y(n), da(n), db(n);
  Add(a.data(), b.data(), y.data(), n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(y[i], a[i] + b[i]);
  AddGrad(dy.data(), da.data(), db.data(), n);
  EXPECT_EQ(da, dy);
  EXPECT_EQ(db, dy);
  Mul(a.data(), b.data(), y.data(), n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(y[i], a[i] * b[i]);
  MulGrad(a.data(), b.data(), dy.data(), da.data(), db.data(), n);
  auto loss_a = [&](const Vec& as) { Vec o(n); Mul(as.data(), b.data(), o.data(), n); return Dot(dy, o); };
  auto loss_b = [&](const Vec& bs) { Vec o(n); Mul(a.data(), bs.data(), o.data(), n); return Dot(dy, o); };
  EXPECT_LT(MaxFdError(a, loss_a, da), kFdTolerance);
  EXPECT_LT(MaxFdError(b, loss_b, db), kFdTolerance);
  // Null outputs are skipped; an in-place residual add works.
  MulGrad<double>(a.data(), b.data(), dy.data(), nullptr, db.data(), n);
  Vec acc = a;
  Add(acc.data(), b.data(), acc.data(), n);
  EXPECT_EQ(acc[4], a[4] + b[4]);
}

// Large enough to be split over the pool: every chunk boundary is handled.
TEST(Pointwise, LargeArraysAgreeWithScalarFormulas) {
  const int64_t n = 200003;
  std::vector<float> x(n), y(n), dx(n), dy(n, 1.f);
  for (int64_t i = 0; i < n; ++i) x[i] = float(i % 1001) * 0.13f - 65.f;  // |x/15| from 0 to past the clamp
  Softcap(x.data(), y.data(), n, 15.f);
  ReluSquareGrad(x.data(), dy.data(), dx.data(), n);
  for (int64_t i = 0; i < n; i += 7) {
    const double want = 15.0 * std::tanh(double(x[i]) / 15.0);
    ASSERT_NEAR(y[i], want, 6e-7 * std::abs(want) + 1e-30) << i;
    ASSERT_FLOAT_EQ(dx[i], x[i] > 0 ? 2 * x[i] : 0.f) << i;
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
