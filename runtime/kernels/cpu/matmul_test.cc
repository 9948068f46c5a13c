#include "runtime/kernels/cpu/matmul.h"

#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"

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

}  // namespace
}  // namespace gpt_sft::runtime::kernels
