#include "runtime/kernels/cpu/optimizers.h"

#include <algorithm>
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

// Eigenvalues of a symmetric [n, n] matrix by cyclic Jacobi rotations.
std::vector<double> SymmetricEigenvalues(Mat a, int64_t n) {
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) off += a[i * n + j] * a[i * n + j];
    if (off < 1e-26) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        if (std::abs(a[p * n + q]) < 1e-300) continue;
        const double theta = (a[q * n + q] - a[p * n + p]) / (2 * a[p * n + q]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < n; ++k) {  // A J
          const double kp = a[k * n + p], kq = a[k * n + q];
          a[k * n + p] = c * kp - s * kq;
          a[k * n + q] = s * kp + c * kq;
        }
        for (int64_t k = 0; k < n; ++k) {  // J^T (A J)
          const double pk = a[p * n + k], qk = a[q * n + k];
          a[p * n + k] = c * pk - s * qk;
          a[q * n + k] = s * pk + c * qk;
        }
      }
  }
  std::vector<double> eig(n);
  for (int64_t i = 0; i < n; ++i) eig[i] = a[i * n + i];
  return eig;
}

// Singular values of x [rows, cols]: square roots of the eigenvalues of the smaller Gram.
std::vector<double> SingularValues(const Mat& x, int64_t rows, int64_t cols) {
  const bool wide = rows <= cols;
  const int64_t r = wide ? rows : cols, c = wide ? cols : rows;
  auto at = [&](int64_t i, int64_t k) { return wide ? x[i * cols + k] : x[k * cols + i]; };
  Mat gram(r * r, 0.0);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < r; ++j)
      for (int64_t k = 0; k < c; ++k) gram[i * r + j] += at(i, k) * at(j, k);
  std::vector<double> sv = SymmetricEigenvalues(gram, r);
  for (double& v : sv) v = std::sqrt(std::max(0.0, v));
  return sv;
}

TEST(TestHelpers, JacobiFindsKnownEigenvalues) {
  // Q diag(1, 4, 9) Q^T for a rotation Q in the (0, 2) plane by 0.3 rad.
  const double c = std::cos(0.3), s = std::sin(0.3);
  const Mat a = {1 * c * c + 9 * s * s, 0, (9 - 1) * c * s, 0, 4, 0, (9 - 1) * c * s, 0, 1 * s * s + 9 * c * c};
  std::vector<double> eig = SymmetricEigenvalues(a, 3);
  std::sort(eig.begin(), eig.end());
  EXPECT_NEAR(eig[0], 1, 1e-12);
  EXPECT_NEAR(eig[1], 4, 1e-12);
  EXPECT_NEAR(eig[2], 9, 1e-12);
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

// NS5 is a polynomial map of the singular values that pushes them toward 1: the output's
// lie in roughly [0.5, 1.5] (not exactly 1: five quintic steps do not converge).
TEST_P(NewtonSchulz, OutputIsApproximatelyOrthogonal) {
  const auto [rows, cols] = GetParam();
  if (rows == cols) GTEST_SKIP() << "a random square matrix may have a singular value too small for 5 steps";
  Mat g = Random(rows * cols, 4), out(rows * cols), scratch(NewtonSchulz5ScratchSize(rows, cols));
  for (int64_t i = 0; i < rows * cols; ++i) g[i] *= 1 + (i / cols) % 3;  // spread the singular values
  NewtonSchulz5(g.data(), out.data(), rows, cols, scratch.data());
  const std::vector<double> in_sv = SingularValues(g, rows, cols), sv = SingularValues(out, rows, cols);
  const double in_max = *std::max_element(in_sv.begin(), in_sv.end());
  const double in_min = *std::min_element(in_sv.begin(), in_sv.end());
  EXPECT_GT(in_max / in_min, 2.0);  // the input is far from orthogonal
  for (double v : sv) {
    EXPECT_GT(v, 0.5);
    EXPECT_LT(v, 1.5);
  }
}

// float follows double to float precision (the trainer runs float32).
TEST_P(NewtonSchulz, FloatFollowsDouble) {
  const auto [rows, cols] = GetParam();
  const Mat g = Random(rows * cols, 5);
  Mat out(rows * cols), scratch(NewtonSchulz5ScratchSize(rows, cols));
  NewtonSchulz5(g.data(), out.data(), rows, cols, scratch.data());
  std::vector<float> gf(g.begin(), g.end()), outf(rows * cols), sf(NewtonSchulz5ScratchSize(rows, cols));
  NewtonSchulz5(gf.data(), outf.data(), rows, cols, sf.data());
  for (int64_t i = 0; i < rows * cols; ++i) ASSERT_NEAR(outf[i], out[i], 1e-4) << i;
}

INSTANTIATE_TEST_SUITE_P(Shapes, NewtonSchulz,
                         ::testing::Values(std::make_pair(8, 20), std::make_pair(20, 8), std::make_pair(12, 12),
                                           std::make_pair(5, 33), std::make_pair(40, 16)));

// Many elements (several pool chunks), two steps, against the formula written out.
TEST(AdamW, LargeArrayTwoStepsMatchTheFormula) {
  const int64_t n = 40000;
  Mat p = Random(n, 7), m(n, 0.0), v(n, 0.0), g1 = Random(n, 8), g2 = Random(n, 9);
  const Mat p0 = p;
  AdamWUpdate(p.data(), m.data(), v.data(), g1.data(), n, {0.01, 0.8, 0.95, 1e-10, 0.1, 1});
  AdamWUpdate(p.data(), m.data(), v.data(), g2.data(), n, {0.01, 0.8, 0.95, 1e-10, 0.1, 2});
  for (int64_t i = 0; i < n; i += 101) {
    double pi = p0[i], mi = 0, vi = 0;
    const double gs[2] = {g1[i], g2[i]};
    for (int t = 1; t <= 2; ++t) {
      pi *= 1 - 0.01 * 0.1;
      mi = 0.8 * mi + 0.2 * gs[t - 1];
      vi = 0.95 * vi + 0.05 * gs[t - 1] * gs[t - 1];
      pi -= 0.01 / (1 - std::pow(0.8, t)) * mi / (std::sqrt(vi) / std::sqrt(1 - std::pow(0.95, t)) + 1e-10);
    }
    ASSERT_NEAR(p[i], pi, 1e-13) << i;
    ASSERT_NEAR(m[i], mi, 1e-15) << i;
    ASSERT_NEAR(v[i], vi, 1e-15) << i;
  }
}

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

// float steps compute in double like double ones, 8 lanes at a time on AVX-512 CPUs: every
// element (a length with a tail past the last 8) must equal the scalar expression's bits.
std::vector<float> RandomFloats(int64_t n, uint32_t seed) {
  const Mat d = Random(n, seed);
  return std::vector<float>(d.begin(), d.end());
}

TEST(AdamW, FloatEqualsTheScalarExpressionBitForBit) {
  const int64_t n = 40000 + 13;
  std::vector<float> p = RandomFloats(n, 11), m = RandomFloats(n, 12), v(n), g = RandomFloats(n, 13);
  for (int64_t i = 0; i < n; ++i) v[i] = p[i] * p[i];
  std::vector<float> p0 = p, m0 = m, v0 = v;
  const AdamWHyper h{0.01, 0.8, 0.95, 1e-8, 0.1, 3};
  AdamWUpdate(p.data(), m.data(), v.data(), g.data(), n, h);
  const double bias1 = 1 - std::pow(0.8, 3.0), bias2 = 1 - std::pow(0.95, 3.0);
  for (int64_t i = 0; i < n; ++i) {
    const double gi = g[i], mi = 0.8 * m0[i] + (1 - 0.8) * gi, vi = 0.95 * v0[i] + (1 - 0.95) * gi * gi;
    ASSERT_EQ(m[i], float(mi)) << i;
    ASSERT_EQ(v[i], float(vi)) << i;
    ASSERT_EQ(p[i], float(double(p0[i]) * (1 - 0.01 * 0.1) -
                          (0.01 / bias1) * mi / (std::sqrt(vi) / std::sqrt(bias2) + 1e-8)))
        << i;
  }
}

TEST(Muon, FloatMomentumAndStepEqualTheScalarExpressionsBitForBit) {
  const int rows = 40, cols = 67;  // 2680 elements: 8-lane groups and a tail
  const int64_t n = rows * cols;
  std::vector<float> p = RandomFloats(n, 14), buf = RandomFloats(n, 15), g = RandomFloats(n, 16);
  const std::vector<float> p0 = p, buf0 = buf;
  std::vector<float> scratch(MuonScratchSize(rows, cols));
  MuonUpdate(p.data(), buf.data(), g.data(), rows, cols, {0.02, 0.95}, scratch.data());
  std::vector<float> nesterov(n), ortho(n), s2(NewtonSchulz5ScratchSize(rows, cols));
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(buf[i], float(0.95 * buf0[i] + (1 - 0.95) * g[i])) << i;
    nesterov[i] = float((1 - 0.95) * g[i] + 0.95 * buf[i]);
  }
  NewtonSchulz5(nesterov.data(), ortho.data(), rows, cols, s2.data());
  const double scale = 0.02 * std::sqrt(std::max(1.0, double(rows) / cols));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(p[i], float(p0[i] - scale * ortho[i])) << i;
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
