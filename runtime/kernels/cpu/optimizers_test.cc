#include "runtime/kernels/cpu/optimizers.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::kernels {
namespace {

using Mat = std::vector<double>;

Mat Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d;
  Mat m(n);
  for (double& x : m) x = d(rng);
  return m;
}

// NS5 written from its definition with plain loops, on X [r, c] with r <= c.
Mat NaiveNs5Wide(Mat x, int64_t r, int64_t c) {
  double norm = 0;
  for (double v : x) norm += v * v;
  for (double& v : x) v /= std::sqrt(norm) + 1e-7;
  for (int it = 0; it < 5; ++it) {
    Mat A(r * r, 0.0), AA(r * r, 0.0), next(r * c, 0.0);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < r; ++j)
        for (int64_t k = 0; k < c; ++k) A[i * r + j] += x[i * c + k] * x[j * c + k];
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < r; ++j)
        for (int64_t k = 0; k < r; ++k) AA[i * r + j] += A[i * r + k] * A[k * r + j];
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        double bx = 0;
        for (int64_t k = 0; k < r; ++k) bx += (-4.7750 * A[i * r + k] + 2.0315 * AA[i * r + k]) * x[k * c + j];
        next[i * c + j] = 3.4445 * x[i * c + j] + bx;
      }
    x = next;
  }
  return x;
}

class NewtonSchulz : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(NewtonSchulz, MatchesItsDefinitionTallAndWide) {
  const auto [rows, cols] = GetParam();
  Mat g = Random(rows * cols, 3), out(rows * cols), scratch(NewtonSchulz5ScratchSize(rows, cols));
  NewtonSchulz5(g.data(), out.data(), rows, cols, scratch.data());
  Mat want;
  if (rows <= cols) {
    want = NaiveNs5Wide(g, rows, cols);
  } else {  // transpose to wide, iterate, transpose back
    Mat gt(rows * cols);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) gt[j * rows + i] = g[i * cols + j];
    Mat wt = NaiveNs5Wide(gt, cols, rows);
    want.resize(rows * cols);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) want[i * cols + j] = wt[j * rows + i];
  }
  for (int64_t i = 0; i < rows * cols; ++i) ASSERT_NEAR(out[i], want[i], 1e-10) << i;
  // NS5 aims at an orthogonal factor: rows of the wide form are near-orthonormal, so the
  // diagonal of X X^T lands roughly in [0.5, 1.5] (the quintic does not converge exactly).
  const int64_t r = std::min(rows, cols), c = std::max(rows, cols);
  for (int64_t i = 0; i < r; ++i) {
    double d = 0;
    for (int64_t k = 0; k < c; ++k) {
      const double x = rows <= cols ? out[i * cols + k] : out[k * cols + i];
      d += x * x;
    }
    EXPECT_GT(d, 0.3) << i;
    EXPECT_LT(d, 1.5) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, NewtonSchulz,
                         ::testing::Values(std::make_pair(8, 20), std::make_pair(20, 8), std::make_pair(12, 12)));

TEST(AdamW, MatchesHandComputedSteps) {
  // One element, g = 0.5 twice, lr 0.1: m1 = 0.1, v1 = 0.0125; bias1 = 0.2, bias2 = 0.05.
  // update1 = (0.1/0.2) * 0.1 / (sqrt(0.0125)/sqrt(0.05) + 1e-10) = 0.5 * 0.1 / 0.5 = 0.1.
  double p = 1.0, m = 0, v = 0, g = 0.5;
  AdamWUpdate(&p, &m, &v, &g, 1, {0.1, 0.8, 0.95, 1e-10, 0.0, 1});
  EXPECT_NEAR(p, 0.9, 1e-9);
  EXPECT_NEAR(m, 0.1, 1e-15);
  EXPECT_NEAR(v, 0.0125, 1e-15);
  // Decoupled weight decay scales p before the step.
  double q = 2.0, m2 = 0, v2 = 0;
  AdamWUpdate(&q, &m2, &v2, &g, 1, {0.1, 0.8, 0.95, 1e-10, 0.5, 1});
  EXPECT_NEAR(q, 2.0 * 0.95 - 0.1, 1e-9);
}

TEST(Muon, AppliesMomentumNesterovAndTheShapeScale) {
  const int rows = 12, cols = 4;  // tall: scale sqrt(3)
  Mat p(rows * cols, 0.0), buf = Random(rows * cols, 5), g = Random(rows * cols, 6);
  Mat buf0 = buf, scratch(MuonScratchSize(rows, cols));
  MuonUpdate(p.data(), buf.data(), g.data(), rows, cols, {0.01, 0.95}, scratch.data());
  Mat nesterov(rows * cols), ns(rows * cols), s2(NewtonSchulz5ScratchSize(rows, cols));
  for (int i = 0; i < rows * cols; ++i) {
    EXPECT_NEAR(buf[i], 0.95 * buf0[i] + 0.05 * g[i], 1e-15);
    nesterov[i] = 0.05 * g[i] + 0.95 * buf[i];
  }
  NewtonSchulz5(nesterov.data(), ns.data(), rows, cols, s2.data());
  for (int i = 0; i < rows * cols; ++i) EXPECT_NEAR(p[i], -0.01 * std::sqrt(3.0) * ns[i], 1e-14);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
