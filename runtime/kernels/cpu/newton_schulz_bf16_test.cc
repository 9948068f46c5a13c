#include "runtime/kernels/cpu/newton_schulz_bf16.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/optimizers.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/vec_math.h"

namespace gpt_sft::runtime::kernels {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> m(n);
  for (float& x : m) x = d(rng);
  return m;
}

double Bf16(double x) { return RoundToBf16(float(x)); }

// The header's definition on X [r, c] (r <= c), written out with loops: the same rounding
// points, products and sums in double (the kernel sums in f32, so they agree to the rounding).
std::vector<double> DefinitionWide(std::vector<double> x, int64_t r, int64_t c) {
  const double a = 3.4445f, b = -4.7750f, cc = 2.0315f;
  double norm = 0;
  for (double& v : x) v = Bf16(v), norm += v * v;
  for (double& v : x) v = Bf16(v * (1.0 / (std::sqrt(norm) + 1e-7)));
  for (int it = 0; it < 5; ++it) {
    std::vector<double> A(r * r, 0.0), AA(r * r, 0.0), B(r * r), next(r * c);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < r; ++j) {
        for (int64_t k = 0; k < c; ++k) A[i * r + j] += x[i * c + k] * x[j * c + k];
      }
    for (double& v : A) v = Bf16(v);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < r; ++j) {
        for (int64_t k = 0; k < r; ++k) AA[i * r + j] += A[i * r + k] * A[k * r + j];
        B[i * r + j] = Bf16(cc * AA[i * r + j] + b * A[i * r + j]);
      }
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        double bx = 0;
        for (int64_t k = 0; k < r; ++k) bx += B[i * r + k] * x[k * c + j];
        next[i * c + j] = Bf16(bx + a * x[i * c + j]);
      }
    x = next;
  }
  return x;
}

std::vector<double> Definition(const std::vector<float>& g, int64_t rows, int64_t cols) {
  if (rows <= cols) return DefinitionWide(std::vector<double>(g.begin(), g.end()), rows, cols);
  std::vector<double> gt(rows * cols), want(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) gt[j * rows + i] = g[i * cols + j];
  const std::vector<double> wt = DefinitionWide(gt, cols, rows);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) want[i * cols + j] = wt[j * rows + i];
  return want;
}

class NewtonSchulzBf16 : public ::testing::TestWithParam<std::pair<int, int>> {};

// Every output is a bf16 value, and the kernel follows the definition: f32 against double
// sums can move a value across a rounding boundary, then the iteration carries that on, so
// the bound is a few bf16 steps (2^-8 relative each) of the output's scale. Measured: the
// shapes up to 33 columns equal exactly; [64, 256] 1.1% of the scale at worst and 79% of the
// elements equal, [256, 64] 1.8% and 48%.
TEST_P(NewtonSchulzBf16, FollowsItsDefinition) {
  const auto [rows, cols] = GetParam();
  const std::vector<float> g = Random(rows * cols, 7);
  std::vector<float> out(rows * cols), scratch(NewtonSchulz5ScratchSize(rows, cols));
  NewtonSchulz5Bf16(g.data(), out.data(), rows, cols, scratch.data());
  const std::vector<double> want = Definition(g, rows, cols);
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  int64_t exact = 0;
  for (int64_t i = 0; i < rows * cols; ++i) {
    ASSERT_EQ(out[i], RoundToBf16(out[i])) << i << ": not a bf16 value";
    EXPECT_NEAR(out[i], want[i], 0.03 * scale) << i << " (" << Bf16GemmDescription() << ")";
    exact += out[i] == float(want[i]);
  }
  EXPECT_GE(exact, (rows * cols) * 4 / 10) << "only " << exact << " of " << rows * cols << " equal";
}

// The header's definition composed of the f32-storage kernels (GemmBf16Inputs on bf16 values
// held as f32, then each epilogue rounded in place): the kernel keeps its operands prepared
// and fuses the epilogues, with these very bits.
std::vector<float> F32StorageComposition(const std::vector<float>& g, int64_t rows, int64_t cols) {
  const float a = 3.4445f, b = -4.7750f, c = 2.0315f;
  const bool tall = rows > cols;
  const int64_t r = tall ? cols : rows, n = tall ? rows : cols;
  std::vector<float> x(r * n), product(r * n), A(r * r), B(r * r), out(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) (tall ? x[j * n + i] : x[i * n + j]) = RoundToBf16(g[i * cols + j]);
  const double inv = 1.0 / (std::sqrt(SumOfSquares(x.data(), r * n)) + 1e-7);
  for (float& v : x) v = RoundToBf16(float(double(v) * inv));
  const Bf16Gemm kernel = ActiveBf16Gemm();
  for (int step = 0; step < 5; ++step) {
    GemmBf16Inputs(kernel, false, true, r, r, n, x.data(), n, x.data(), n, false, A.data(), r);
    for (float& v : A) v = RoundToBf16(v);
    GemmBf16Inputs(kernel, false, false, r, r, r, A.data(), r, A.data(), r, false, product.data(), r);
    for (int64_t i = 0; i < r * r; ++i) B[i] = RoundToBf16(c * product[i] + b * A[i]);
    GemmBf16Inputs(kernel, false, false, r, n, r, B.data(), r, x.data(), n, false, product.data(), n);
    for (int64_t i = 0; i < r * n; ++i) x[i] = RoundToBf16(product[i] + a * x[i]);
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = tall ? x[j * n + i] : x[i * n + j];
  return out;
}

class NewtonSchulzBf16Storage : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(NewtonSchulzBf16Storage, EqualsTheF32StorageCompositionBitForBit) {
  const auto [rows, cols] = GetParam();
  const std::vector<float> g = Random(rows * cols, 10);
  std::vector<float> out(rows * cols), scratch(NewtonSchulz5ScratchSize(rows, cols));
  NewtonSchulz5Bf16(g.data(), out.data(), rows, cols, scratch.data());
  const std::vector<float> want = F32StorageComposition(g, rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) ASSERT_EQ(out[i], want[i]) << i << " (" << Bf16GemmDescription() << ")";
}

// bf16 NS5 is an approximation of the f32 one at bf16 precision, not something else.
TEST_P(NewtonSchulzBf16, StaysNearTheF32Iteration) {
  const auto [rows, cols] = GetParam();
  const std::vector<float> g = Random(rows * cols, 8);
  std::vector<float> bf16(rows * cols), f32(rows * cols), scratch(NewtonSchulz5ScratchSize(rows, cols));
  NewtonSchulz5Bf16(g.data(), bf16.data(), rows, cols, scratch.data());
  NewtonSchulz5(g.data(), f32.data(), rows, cols, scratch.data());
  double num = 0, den = 0;
  bool differs = false;
  for (int64_t i = 0; i < rows * cols; ++i) {
    num += (bf16[i] - f32[i]) * double(bf16[i] - f32[i]);
    den += double(f32[i]) * f32[i];
    differs |= bf16[i] != f32[i];
  }
  EXPECT_LT(std::sqrt(num / den), 0.05);
  EXPECT_TRUE(differs);
}

// Muon with newton_schulz_bf16 applies the bf16 orthogonalisation: p moves by exactly
// lr * sqrt(max(1, rows/cols)) * NS5_bf16(g'), g' the Nesterov gradient (optimizers.h).
TEST(MuonBf16, UpdatesByTheBf16Orthogonalisation) {
  const int64_t rows = 24, cols = 10, n = rows * cols;
  const std::vector<float> g = Random(n, 9);
  std::vector<float> p(n, 1.0f), buf(n, 0.0f), scratch(MuonScratchSize(rows, cols));
  MuonHyper h{0.02, 0.95, /*newton_schulz_bf16=*/true};
  MuonUpdate(p.data(), buf.data(), g.data(), rows, cols, h, scratch.data());
  std::vector<float> nesterov(n), ortho(n), ns_scratch(NewtonSchulz5ScratchSize(rows, cols));
  const double mu = 0.95;
  for (int64_t i = 0; i < n; ++i) {
    const float b = float(mu * 0.0 + (1 - mu) * g[i]);
    nesterov[i] = float((1 - mu) * g[i] + mu * b);
  }
  NewtonSchulz5Bf16(nesterov.data(), ortho.data(), rows, cols, ns_scratch.data());
  const double scale = 0.02 * std::sqrt(double(rows) / cols);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(p[i], float(1.0 - scale * ortho[i])) << i;
}

INSTANTIATE_TEST_SUITE_P(Shapes, NewtonSchulzBf16,
                         ::testing::Values(std::make_pair(8, 20), std::make_pair(20, 8), std::make_pair(12, 12),
                                           std::make_pair(5, 33), std::make_pair(64, 256), std::make_pair(256, 64)));
INSTANTIATE_TEST_SUITE_P(Shapes, NewtonSchulzBf16Storage,
                         ::testing::Values(std::make_pair(8, 20), std::make_pair(20, 8), std::make_pair(5, 33),
                                           std::make_pair(37, 50), std::make_pair(256, 256), std::make_pair(256, 1024),
                                           std::make_pair(1024, 256)));

}  // namespace
}  // namespace gpt_sft::runtime::kernels
