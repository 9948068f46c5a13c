#include "runtime/kernels/cpu/cross_entropy.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::Random;
using testing::Vec;

TEST(CrossEntropy, IgnoresMinusOneAndTheVjpMatchesFiniteDifferences) {
  const int64_t N = 6, V = 5;
  Vec logits = Random(N * V, 9, 3.0), dlogits(N * V);
  std::vector<int32_t> targets = {1, -1, 4, 0, -1, 2};
  CrossEntropyGrad(logits.data(), targets.data(), N, V, 1.0, dlogits.data());
  auto loss = [&](const Vec& l) { return CrossEntropy(l.data(), targets.data(), N, V).loss; };
  EXPECT_LT(testing::MaxFdError(logits, loss, dlogits), testing::kFdTolerance);
  const CrossEntropyResult r = CrossEntropy(logits.data(), targets.data(), N, V);
  EXPECT_EQ(r.count, 4);
  for (int v = 0; v < V; ++v) EXPECT_EQ(dlogits[1 * V + v], 0.0);
  // The mean over counted rows, by hand.
  double want = 0;
  for (int n = 0; n < N; ++n) {
    if (targets[n] < 0) continue;
    double s = 0;
    for (int v = 0; v < V; ++v) s += std::exp(logits[n * V + v]);
    want += std::log(s) - logits[n * V + targets[n]];
  }
  EXPECT_NEAR(r.loss, want / 4, 1e-12);
  // An upstream gradient scales dlogits.
  Vec d2(N * V);
  CrossEntropyGrad(logits.data(), targets.data(), N, V, 0.25, d2.data());
  EXPECT_NEAR(d2[7], 0.25 * dlogits[7], 1e-15);
}

TEST(CrossEntropy, HandWorkedValuesAndAllIgnored) {
  Vec zeros(5, 0.0);
  int32_t t = 3;
  EXPECT_NEAR(CrossEntropy(zeros.data(), &t, 1, 5).loss, std::log(5.0), 1e-12);  // uniform: log V
  const double two[2] = {std::log(3.0), 0.0};  // p = (3/4, 1/4)
  int32_t t1 = 1;
  EXPECT_NEAR(CrossEntropy(two, &t1, 1, 2).loss, std::log(4.0), 1e-12);
  double d[2];
  CrossEntropyGrad(two, &t1, 1, 2, 1.0, d);
  EXPECT_NEAR(d[0], 0.75, 1e-12);
  EXPECT_NEAR(d[1], 0.25 - 1.0, 1e-12);
  int32_t none[2] = {-1, -1};
  const double l2[4] = {1, 2, 3, 4};
  const CrossEntropyResult r = CrossEntropy(l2, none, 2, 2);
  EXPECT_EQ(r.count, 0);
  EXPECT_EQ(r.loss, 0.0);
}

// float at a realistic width (8192 classes, many rows over the pool) against double.
TEST(CrossEntropy, FloatMatchesDoubleAtVocabWidth) {
  const int64_t N = 40, V = 8192;
  const Vec ld = Random(N * V, 11, 8.0);
  std::vector<float> lf(ld.begin(), ld.end()), df(N * V);
  Vec l_rounded(lf.begin(), lf.end()), dd(N * V);
  std::vector<int32_t> targets(N);
  for (int64_t n = 0; n < N; ++n) targets[n] = n % 7 == 3 ? -1 : int32_t((n * 977) % V);
  const double want = CrossEntropy(l_rounded.data(), targets.data(), N, V).loss;
  EXPECT_NEAR(CrossEntropy(lf.data(), targets.data(), N, V).loss, want, 2e-6 * want);
  CrossEntropyGrad(lf.data(), targets.data(), N, V, 1.0, df.data());
  CrossEntropyGrad(l_rounded.data(), targets.data(), N, V, 1.0, dd.data());
  for (int64_t i = 0; i < N * V; ++i) ASSERT_NEAR(df[i], dd[i], 1e-6 * std::abs(dd[i]) + 1e-12) << i;
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
