#include "runtime/kernels/cpu/matmul_bf16.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/onednn_gemm.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

/// n values uniform in [-2, 2), rounded to bf16 when `bf16_valued` (what autocast feeds a matmul).
std::vector<float> Random(int64_t n, int seed, bool bf16_valued = true) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = bf16_valued ? RoundToBf16(u(gen)) : u(gen);
  return v;
}

struct Case {
  bool ta, tb, accumulate;
  int64_t M, N, K;
};

/// Runs GemmBf16Inputs by `kernel` on a case (leading dims padded past the compact ones, so
/// the strided views are exercised) and checks every element against a double-precision sum
/// of the same products: any order of f32 sums of K exact products is within
/// K * 2^-24 * sum |a b| of it (plus the f32 rounding of the start value when accumulating).
void ExpectMatchesExactSum(Bf16Gemm kernel, const Case& t) {
  const int64_t a_rows = t.ta ? t.K : t.M, a_cols = t.ta ? t.M : t.K, lda = a_cols + 3;
  const int64_t b_rows = t.tb ? t.N : t.K, b_cols = t.tb ? t.K : t.N, ldb = b_cols + 5;
  const int64_t ldc = t.N + 2;
  const std::vector<float> a = Random(a_rows * lda, 1), b = Random(b_rows * ldb, 2), c0 = Random(t.M * ldc, 3, false);
  std::vector<float> c = c0;
  GemmBf16Inputs(kernel, t.ta, t.tb, t.M, t.N, t.K, a.data(), lda, b.data(), ldb, t.accumulate, c.data(), ldc);
  int bad = 0;
  for (int64_t m = 0; m < t.M; ++m) {
    for (int64_t n = 0; n < t.N; ++n) {
      double sum = t.accumulate ? c0[m * ldc + n] : 0.0, magnitude = std::abs(sum);
      for (int64_t k = 0; k < t.K; ++k) {
        const double p = double(t.ta ? a[k * lda + m] : a[m * lda + k]) * (t.tb ? b[n * ldb + k] : b[k * ldb + n]);
        sum += p;
        magnitude += std::abs(p);
      }
      const double bound = (t.K + 1) * std::ldexp(1.0, -24) * magnitude + 1e-30;
      if (std::abs(c[m * ldc + n] - sum) > bound && ++bad <= 5) {
        ADD_FAILURE() << "C[" << m << "," << n << "] = " << c[m * ldc + n] << ", exact " << sum << ", bound " << bound;
      }
    }
  }
  // The padding between C's rows is left alone.
  for (int64_t m = 0; m < t.M; ++m) EXPECT_EQ(c[m * ldc + t.N], c0[m * ldc + t.N]) << "row " << m;
  EXPECT_EQ(bad, 0) << "ta " << t.ta << " tb " << t.tb << " M " << t.M << " N " << t.N << " K " << t.K;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool accumulate : {false, true}) {
        cases.push_back({ta, tb, accumulate, 7, 5, 3});      // one call, odd everything
        cases.push_back({ta, tb, accumulate, 301, 67, 131});  // split over the pool, ragged last chunk
      }
  return cases;
}

TEST(MatmulBf16, OneDnnMatchesTheExactSumOnBf16Values) {
  if (!OneDnnHasBf16DotProduct()) GTEST_SKIP() << "this CPU has no AVX512_BF16: the oneDNN path never runs here";
  const int saved = NumThreads();
  for (int threads : {1, 3}) {
    SetNumThreads(threads);
    for (const Case& t : Cases()) ExpectMatchesExactSum(Bf16Gemm::kOneDnn, t);
  }
  SetNumThreads(saved);
  EXPECT_FALSE(OneDnnKernelsUsed().empty());
}

TEST(MatmulBf16, AmxMatchesTheExactSumOnBf16Values) {
  if (!Bf16GemmSupported(Bf16Gemm::kAmx)) GTEST_SKIP() << "this CPU has no AMX-BF16: the amx path never runs here";
  const int saved = NumThreads();
  for (int threads : {1, 3}) {
    SetNumThreads(threads);
    for (const Case& t : Cases()) ExpectMatchesExactSum(Bf16Gemm::kAmx, t);
  }
  SetNumThreads(saved);
}

/// The kernels on bf16 dot products this CPU runs (amx, onednn).
std::vector<Bf16Gemm> DotProductKernels() {
  std::vector<Bf16Gemm> kernels;
  for (Bf16Gemm kernel : SupportedBf16Gemms())
    if (kernel != Bf16Gemm::kFp32) kernels.push_back(kernel);
  return kernels;
}

TEST(MatmulBf16, Fp32FallbackMatchesTheExactSumOnBf16Values) {
  for (const Case& t : Cases()) ExpectMatchesExactSum(Bf16Gemm::kFp32, t);
}

// The dot-product kernels against the fallback at the depth-4 model's MLP shape: the same
// values within the f32 summation bound, and each result independent of the thread count.
TEST(MatmulBf16, DotProductKernelsAgreeWithTheFallbackAndWithThemselvesOverThreadCounts) {
  if (DotProductKernels().empty()) GTEST_SKIP() << "this CPU has no AVX512_BF16";
  const int64_t M = 512, N = 1024, K = 256;
  const std::vector<float> x = Random(M * K, 4), w = Random(N * K, 5);
  std::vector<float> fp32(M * N);
  GemmBf16Inputs(Bf16Gemm::kFp32, false, true, M, N, K, x.data(), K, w.data(), K, false, fp32.data(), N);
  for (Bf16Gemm kernel : DotProductKernels()) {
    SCOPED_TRACE(Bf16GemmName(kernel));
    std::vector<float> one(M * N), two(M * N);
    const int saved = NumThreads();
    SetNumThreads(1);
    GemmBf16Inputs(kernel, false, true, M, N, K, x.data(), K, w.data(), K, false, one.data(), N);
    SetNumThreads(2);
    GemmBf16Inputs(kernel, false, true, M, N, K, x.data(), K, w.data(), K, false, two.data(), N);
    SetNumThreads(saved);
    double worst = 0;
    for (int64_t i = 0; i < M * N; ++i) {
      worst = std::max(worst, std::abs(double(one[i]) - fp32[i]) / (std::abs(double(fp32[i])) + 1.0));
    }
    EXPECT_LT(worst, 1e-5);
    EXPECT_EQ(one, two);
  }
}

// Inputs that are not bf16 values are narrowed by rounding to nearest even (gpt.round_bf16's
// rounding, ties included), so the dot-product paths equal the exact product of the rounded
// values.
TEST(MatmulBf16, DotProductKernelsRoundInputsThatAreNotBf16ValuesToNearestEven) {
  if (DotProductKernels().empty()) GTEST_SKIP() << "this CPU has no AVX512_BF16";
  for (Bf16Gemm kernel : DotProductKernels()) {
  SCOPED_TRACE(Bf16GemmName(kernel));
  const int64_t M = 3, N = 2, K = 18;  // K past one 16-lane block: the tail path too
  std::vector<float> x = Random(M * K, 6, false), w(N * K, 0.0f);
  x[0] = 1.0f + std::ldexp(1.0f, -8);                            // a tie: rounds down to even 1.0
  x[1] = 1.0f + 3 * std::ldexp(1.0f, -8);                        // a tie: rounds up to even
  for (int64_t k = 0; k < K; ++k) w[k] = (k < 2) ? 1.0f : 0.0f;  // y[0,0] = x0 + x1
  w[K + 17] = 1.0f;                                              // y[m,1] = x[m,17], the tail
  std::vector<float> y(M * N);
  GemmBf16Inputs(kernel, false, true, M, N, K, x.data(), K, w.data(), K, false, y.data(), N);
  EXPECT_EQ(y[0], 1.0f + (1.0f + 4 * std::ldexp(1.0f, -8)));
  for (int64_t m = 0; m < M; ++m) EXPECT_EQ(y[m * N + 1], RoundToBf16(x[m * K + 17])) << "row " << m;
  }
}

/// Each kernel on inputs that are not bf16 values computes, bit for bit, what it computes on
/// those inputs rounded first (the contract gpt-elide-gemm-input-rounding relies on: a
/// gpt.round_bf16 that only a bf16 GEMM reads may be skipped), transposed or not, with
/// padded leading dims, split over the pool or not.
void ExpectRoundsItsInputs(Bf16Gemm kernel, const Case& t) {
  const int64_t a_rows = t.ta ? t.K : t.M, a_cols = t.ta ? t.M : t.K, lda = a_cols + 3;
  const int64_t b_rows = t.tb ? t.N : t.K, b_cols = t.tb ? t.K : t.N, ldb = b_cols + 5;
  const int64_t ldc = t.N + 2;
  std::vector<float> a = Random(a_rows * lda, 11, false), b = Random(b_rows * ldb, 12, false);
  a[0] = 1.0f + std::ldexp(1.0f, -8);  // ties: to even
  b[0] = 1.0f + 3 * std::ldexp(1.0f, -8);
  std::vector<float> a16(a.size()), b16(b.size());
  for (size_t i = 0; i < a.size(); ++i) a16[i] = RoundToBf16(a[i]);
  for (size_t i = 0; i < b.size(); ++i) b16[i] = RoundToBf16(b[i]);
  const std::vector<float> c0 = Random(t.M * ldc, 13, false);
  std::vector<float> c = c0, c16 = c0;
  GemmBf16Inputs(kernel, t.ta, t.tb, t.M, t.N, t.K, a.data(), lda, b.data(), ldb, t.accumulate, c.data(), ldc);
  GemmBf16Inputs(kernel, t.ta, t.tb, t.M, t.N, t.K, a16.data(), lda, b16.data(), ldb, t.accumulate, c16.data(), ldc);
  EXPECT_EQ(c, c16) << "ta " << t.ta << " tb " << t.tb << " M " << t.M << " N " << t.N << " K " << t.K;
}

TEST(MatmulBf16, Fp32FallbackRoundsInputsThatAreNotBf16Values) {
  for (const Case& t : Cases()) ExpectRoundsItsInputs(Bf16Gemm::kFp32, t);
}

TEST(MatmulBf16, DotProductKernelsRoundInputsThatAreNotBf16ValuesAsRoundingFirstDoes) {
  if (DotProductKernels().empty()) GTEST_SKIP() << "this CPU has no AVX512_BF16";
  for (Bf16Gemm kernel : DotProductKernels())
    for (const Case& t : Cases()) ExpectRoundsItsInputs(kernel, t);
}

/// The rounded-output variant equals the plain kernel followed by rounding C, bit for bit.
void ExpectRoundedOutputIsRoundingAfter(Bf16Gemm kernel, const Case& t) {
  const int64_t a_rows = t.ta ? t.K : t.M, a_cols = t.ta ? t.M : t.K, lda = a_cols + 3;
  const int64_t b_rows = t.tb ? t.N : t.K, b_cols = t.tb ? t.K : t.N, ldb = b_cols + 5;
  const int64_t ldc = t.N + 2;
  const std::vector<float> a = Random(a_rows * lda, 21, false), b = Random(b_rows * ldb, 22, false);
  const std::vector<float> c0 = Random(t.M * ldc, 23, false);
  std::vector<float> want = c0, got = c0;
  GemmBf16Inputs(kernel, t.ta, t.tb, t.M, t.N, t.K, a.data(), lda, b.data(), ldb, t.accumulate, want.data(), ldc);
  for (int64_t m = 0; m < t.M; ++m) RoundBf16(want.data() + m * ldc, want.data() + m * ldc, t.N);
  GemmBf16InputsRoundedOutput(kernel, t.ta, t.tb, t.M, t.N, t.K, a.data(), lda, b.data(), ldb, t.accumulate,
                              got.data(), ldc);
  EXPECT_EQ(want, got) << "ta " << t.ta << " tb " << t.tb << " M " << t.M << " N " << t.N << " K " << t.K;
}

TEST(MatmulBf16, RoundedOutputIsRoundingAfterOnEveryKernel) {
  for (const Case& t : Cases()) ExpectRoundedOutputIsRoundingAfter(Bf16Gemm::kFp32, t);
  if (DotProductKernels().empty()) GTEST_SKIP() << "this CPU has no AVX512_BF16: no dot-product path runs here";
  for (Bf16Gemm kernel : DotProductKernels())
    for (const Case& t : Cases()) ExpectRoundedOutputIsRoundingAfter(kernel, t);
}

TEST(MatmulBf16, MatmulRoundedOutputIsMatmulThenRound) {
  const int64_t M = 300, N = 70, K = 130;
  const std::vector<float> x = Random(M * K, 24, false), w = Random(N * K, 25, false);
  std::vector<float> want(M * N), got(M * N);
  MatmulBf16Inputs(x.data(), w.data(), want.data(), M, N, K);
  RoundBf16(want.data(), want.data(), M * N);
  MatmulBf16InputsRoundedOutput(x.data(), w.data(), got.data(), M, N, K);
  EXPECT_EQ(want, got);
}

TEST(MatmulBf16, DispatchFollowsTheCpuFlags) {
  if (std::getenv("GPT_SFT_CPU_BF16_GEMM") != nullptr) {
    GTEST_SKIP() << "GPT_SFT_CPU_BF16_GEMM is set: this test checks the choice without the override";
  }
  const Bf16Gemm want = Bf16GemmSupported(Bf16Gemm::kAmx)      ? Bf16Gemm::kAmx
                        : OneDnnHasBf16DotProduct()              ? Bf16Gemm::kOneDnn
                                                                 : Bf16Gemm::kFp32;
  EXPECT_EQ(ActiveBf16Gemm(), want);
  const char* prefix = want == Bf16Gemm::kAmx ? "amx (" : want == Bf16Gemm::kOneDnn ? "onednn[" : "fp32 (";
  EXPECT_EQ(Bf16GemmDescription().rfind(prefix, 0), 0u) << Bf16GemmDescription();
}

// The model's entry points are the GEMMs of matmul.h on the active kernel.
// The compiled step multiplies by a weight without its transposed copy (matmul_grad_input):
// the same bits as the interpreter's matmul by the copy, on both kernels, rounded or not.
TEST(MatmulBf16, ByTheWeightIsByItsTransposedCopyBitForBit) {
  const int64_t M = 700, N = 96, K = 160;  // dy [M, N], w [N, K]: dx [M, K]
  const std::vector<float> dy = Random(M * N, 31, false), w = Random(N * K, 32, false);
  std::vector<float> wt(K * N);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) wt[k * N + n] = w[n * K + k];
  for (bool round : {false, true}) {
    std::vector<float> by_copy(M * K), direct(M * K);
    if (round) {
      MatmulBf16InputsRoundedOutput(dy.data(), wt.data(), by_copy.data(), M, K, N);
    } else {
      MatmulBf16Inputs(dy.data(), wt.data(), by_copy.data(), M, K, N);
    }
    MatmulGradInputBf16Inputs(dy.data(), w.data(), direct.data(), M, N, K, round);
    EXPECT_EQ(std::memcmp(by_copy.data(), direct.data(), by_copy.size() * sizeof(float)), 0) << "round " << round;
  }
  for (Bf16Gemm kernel : SupportedBf16Gemms()) {
    std::vector<float> by_copy(M * K), direct(M * K);
    GemmBf16Inputs(kernel, false, true, M, K, N, dy.data(), N, wt.data(), N, false, by_copy.data(), K);
    GemmBf16Inputs(kernel, false, false, M, K, N, dy.data(), N, w.data(), K, false, direct.data(), K);
    EXPECT_EQ(std::memcmp(by_copy.data(), direct.data(), by_copy.size() * sizeof(float)), 0)
        << Bf16GemmName(kernel);
  }
}

/// x prepared for the active kernel, in a buffer of x's own f32 size (as the compiled step
/// keeps it).
std::vector<float> PreparedCopy(const std::vector<float>& x) {
  std::vector<float> prepared(x.size(), -1.0f);
  PrepareBf16Operand(ActiveBf16Gemm(), x.data(), static_cast<int64_t>(x.size()), prepared.data());
  return prepared;
}

// A prepared x gives the f32 x's bits: as the weight gradient's B (read in place) and as the
// rounded product's A, on shapes Gemm splits over the pool; on x that is not bf16 values too.
TEST(MatmulBf16, PreparedXIsTheF32XBitForBit) {
  const int64_t M = 700, N = 96, K = 160;
  const std::vector<float> x = Random(M * K, 41, false), w = Random(N * K, 42), dy = Random(M * N, 43);
  const std::vector<float> prepared = PreparedCopy(x);
  std::vector<float> dw(N * K, 1.0f), dw_prepared(N * K, 1.0f);
  MatmulGradWeightBf16Inputs(dy.data(), x.data(), dw.data(), M, N, K, /*accumulate=*/true);
  MatmulGradWeightBf16PreparedX(dy.data(), prepared.data(), dw_prepared.data(), M, N, K, /*accumulate=*/true);
  EXPECT_EQ(std::memcmp(dw.data(), dw_prepared.data(), dw.size() * sizeof(float)), 0);
  std::vector<float> y(M * N), y_prepared(M * N);
  int64_t epilogue_rows = 0;
  MatmulBf16InputsRoundedOutput(x.data(), w.data(), y.data(), M, N, K);
  MatmulBf16PreparedXRoundedOutputThen(prepared.data(), w.data(), y_prepared.data(), M, N, K,
                                       [&](int64_t m0, int64_t m1) { epilogue_rows += m1 - m0; });
  EXPECT_EQ(std::memcmp(y.data(), y_prepared.data(), y.size() * sizeof(float)), 0);
  EXPECT_EQ(epilogue_rows, M);
  // Both weight-gradient operands prepared; dy prepared for the grad-input product.
  const std::vector<float> dy_prepared = PreparedCopy(dy);
  std::vector<float> dw_both(N * K, 1.0f);
  MatmulGradWeightBf16PreparedDyX(dy_prepared.data(), prepared.data(), dw_both.data(), M, N, K, /*accumulate=*/true);
  EXPECT_EQ(std::memcmp(dw.data(), dw_both.data(), dw.size() * sizeof(float)), 0);
  for (bool round : {false, true}) {
    std::vector<float> dx(M * K), dx_prepared(M * K);  // dx = dy [M, N] w [N, K]
    MatmulGradInputBf16Inputs(dy.data(), w.data(), dx.data(), M, N, K, round);
    MatmulGradInputBf16(dy_prepared.data(), true, w.data(), dx_prepared.data(), M, N, K, round);
    EXPECT_EQ(std::memcmp(dx.data(), dx_prepared.data(), dx.size() * sizeof(float)), 0) << "round " << round;
  }
  std::vector<float> y_plain(M * N);
  MatmulBf16PreparedXRoundedOutput(prepared.data(), w.data(), y_plain.data(), M, N, K);
  EXPECT_EQ(std::memcmp(y.data(), y_plain.data(), y.size() * sizeof(float)), 0);
}

TEST(MatmulBf16, MatmulAndWeightGradAreTheirGemms) {
  const int64_t M = 40, N = 24, K = 56;
  const std::vector<float> x = Random(M * K, 7), w = Random(N * K, 8), dy = Random(M * N, 9);
  std::vector<float> y(M * N), y_gemm(M * N), dw(N * K, 1.0f), dw_gemm(N * K, 1.0f);
  MatmulBf16Inputs(x.data(), w.data(), y.data(), M, N, K);
  GemmBf16Inputs(ActiveBf16Gemm(), false, true, M, N, K, x.data(), K, w.data(), K, false, y_gemm.data(), N);
  EXPECT_EQ(y, y_gemm);
  MatmulGradWeightBf16Inputs(dy.data(), x.data(), dw.data(), M, N, K, /*accumulate=*/true);
  GemmBf16Inputs(ActiveBf16Gemm(), true, false, N, K, M, dy.data(), N, x.data(), K, true, dw_gemm.data(), K);
  EXPECT_EQ(dw, dw_gemm);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
