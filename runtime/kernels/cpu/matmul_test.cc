#include "runtime/kernels/cpu/matmul.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::Dot;
using testing::MaxFdError;
using testing::Random;
using testing::Vec;

TEST(Matmul, ForwardIsXTimesWTransposed) {
  const int64_t M = 4, N = 3, K = 5;
  Vec x = Random(M * K, 10), w = Random(N * K, 11), y(M * N);
  Matmul(x.data(), w.data(), y.data(), M, N, K);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += x[m * K + k] * w[n * K + k];
      EXPECT_NEAR(y[m * N + n], want, 1e-12);
    }
}

TEST(Matmul, VjpsMatchFiniteDifferencesAndAccumulateAdds) {
  const int64_t M = 4, N = 3, K = 5;
  Vec x = Random(M * K, 10), w = Random(N * K, 11), dy = Random(M * N, 12), dx(M * K), dw(N * K);
  MatmulGradInput(dy.data(), w.data(), dx.data(), M, N, K);
  MatmulGradWeight(dy.data(), x.data(), dw.data(), M, N, K, /*accumulate=*/false);
  auto loss_x = [&](const Vec& xs) { Vec y(M * N); Matmul(xs.data(), w.data(), y.data(), M, N, K); return Dot(dy, y); };
  auto loss_w = [&](const Vec& ws) { Vec y(M * N); Matmul(x.data(), ws.data(), y.data(), M, N, K); return Dot(dy, y); };
  EXPECT_LT(MaxFdError(x, loss_x, dx), testing::kFdTolerance);
  EXPECT_LT(MaxFdError(w, loss_w, dw), testing::kFdTolerance);
  Vec dw2 = dw;
  MatmulGradWeight(dy.data(), x.data(), dw2.data(), M, N, K, /*accumulate=*/true);
  for (int i = 0; i < N * K; ++i) EXPECT_NEAR(dw2[i], 2 * dw[i], 1e-12);
  // Overwrite mode ignores what was there.
  Vec dw3(N * K, 123.0);
  MatmulGradWeight(dy.data(), x.data(), dw3.data(), M, N, K, /*accumulate=*/false);
  for (int i = 0; i < N * K; ++i) EXPECT_NEAR(dw3[i], dw[i], 1e-12);
}

// Large enough to be split over the pool (> 2 MFLOP, rows not a multiple of the chunk),
// every transpose combination, alpha and beta, 1 and 3 threads.
// The compiled step multiplies by a weight without its transposed copy (matmul_grad_input):
// MatmulGradInput by w is Matmul by w's transpose, bit for bit (the interpreter's way).
TEST(Matmul, GradInputIsMatmulByTheTransposedCopyBitForBit) {
  const int64_t M = 700, N = 96, K = 160;
  for (int seed : {1, 2}) {
    const Vec dy = Random(M * N, seed), w = Random(N * K, seed + 10);
    Vec wt(K * N), by_copy(M * K), direct(M * K);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) wt[k * N + n] = w[n * K + k];
    Matmul(dy.data(), wt.data(), by_copy.data(), M, K, N);
    MatmulGradInput(dy.data(), w.data(), direct.data(), M, N, K);
    EXPECT_EQ(std::memcmp(by_copy.data(), direct.data(), by_copy.size() * sizeof(by_copy[0])), 0);
    std::vector<float> dyf(dy.begin(), dy.end()), wf(w.begin(), w.end()), wtf(wt.begin(), wt.end());
    std::vector<float> by_copy_f(M * K), direct_f(M * K);
    Matmul(dyf.data(), wtf.data(), by_copy_f.data(), M, K, N);
    MatmulGradInput(dyf.data(), wf.data(), direct_f.data(), M, N, K);
    EXPECT_EQ(std::memcmp(by_copy_f.data(), direct_f.data(), by_copy_f.size() * sizeof(float)), 0);
  }
}

TEST(Gemm, RowSplitMatchesTheTripleLoop) {
  const int64_t M = 203, N = 37, K = 301;
  const int saved = NumThreads();
  for (int threads : {1, 3})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        SetNumThreads(threads);
        const int64_t lda = ta ? M : K, ldb = tb ? K : N;
        const Vec a = Random(M * K, 20), b = Random(K * N, 21), c0 = Random(M * N, 22);
        Vec c = c0;
        Gemm<double>(ta, tb, M, N, K, 0.5, a.data(), lda, b.data(), ldb, 2.0, c.data(), N);
        for (int64_t i = 0; i < M; i += 7)
          for (int64_t j = 0; j < N; ++j) {
            double want = 2.0 * c0[i * N + j];
            for (int64_t p = 0; p < K; ++p)
              want += 0.5 * (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
            ASSERT_NEAR(c[i * N + j], want, 1e-11) << threads << ta << tb << " " << i << "," << j;
          }
      }
  SetNumThreads(saved);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
