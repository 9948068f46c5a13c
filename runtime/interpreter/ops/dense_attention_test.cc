// Dense attention with the causal mask agrees with the flash kernel (forward, lse and
// backward), with GQA, segments and more than one kernel block.
#include "runtime/interpreter/ops/dense_attention.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/finite_difference.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace k = ::gpt_sft::runtime::kernels;

template <typename T>
std::vector<T> Random(size_t n, uint32_t seed) {
  std::vector<double> d = k::testing::Random(n, seed);
  return std::vector<T>(d.begin(), d.end());
}

template <typename T>
double MaxAbsDiff(const std::vector<T>& a, const std::vector<T>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
  return worst;
}

template <typename T>
void ExpectDenseCausalMatchesKernel(double tolerance) {
  const k::AttentionShape s{2, 70, 4, 2, 8};
  const size_t nq = s.B * s.T * s.H * s.D, nk = s.B * s.T * s.Hkv * s.D, nl = s.B * s.H * s.T;
  std::vector<T> q = Random<T>(nq, 1), kk = Random<T>(nk, 2), v = Random<T>(nk, 3), dout = Random<T>(nq, 4);
  std::vector<int32_t> seg(s.B * s.T);
  for (int64_t i = 0; i < s.B * s.T; ++i) seg[i] = static_cast<int32_t>((i % s.T) / 30);
  std::vector<T> out_k(nq), lse_k(nl), dq_k(nq), dk_k(nk), dv_k(nk);
  std::vector<T> out_d(nq), lse_d(nl), dq_d(nq), dk_d(nk), dv_d(nk);
  k::Attention(q.data(), kk.data(), v.data(), seg.data(), s, out_k.data(), lse_k.data());
  k::AttentionGrad(q.data(), kk.data(), v.data(), seg.data(), s, out_k.data(), lse_k.data(), dout.data(),
                   dq_k.data(), dk_k.data(), dv_k.data());
  const double scale = 1.0 / std::sqrt(double(s.D));
  DenseAttention(q.data(), kk.data(), v.data(), seg.data(), s, /*causal=*/true, scale, out_d.data(), lse_d.data());
  DenseAttentionGrad(q.data(), kk.data(), v.data(), seg.data(), s, true, scale, out_d.data(), lse_d.data(),
                     dout.data(), dq_d.data(), dk_d.data(), dv_d.data());
  EXPECT_LT(MaxAbsDiff(out_k, out_d), tolerance);
  EXPECT_LT(MaxAbsDiff(lse_k, lse_d), tolerance);
  EXPECT_LT(MaxAbsDiff(dq_k, dq_d), tolerance);
  EXPECT_LT(MaxAbsDiff(dk_k, dk_d), tolerance);
  EXPECT_LT(MaxAbsDiff(dv_k, dv_d), tolerance);
}

TEST(DenseAttention, CausalMatchesTheFlashKernelInDouble) { ExpectDenseCausalMatchesKernel<double>(1e-12); }

TEST(DenseAttention, CausalMatchesTheFlashKernelInFloat) { ExpectDenseCausalMatchesKernel<float>(1e-5); }

TEST(DenseAttention, NonCausalSeesLaterKeys) {
  // One query, two keys, the second with a huge score: non-causal attends to it.
  const k::AttentionShape s{1, 2, 1, 1, 1};
  std::vector<double> q = {1, 1}, kk = {0, 100}, v = {3, 7}, out(2), lse(2);
  DenseAttention(q.data(), kk.data(), v.data(), nullptr, s, /*causal=*/false, 1.0, out.data(), lse.data());
  EXPECT_NEAR(out[0], 7.0, 1e-12);
  DenseAttention(q.data(), kk.data(), v.data(), nullptr, s, /*causal=*/true, 1.0, out.data(), lse.data());
  EXPECT_NEAR(out[0], 3.0, 1e-12);
}

}  // namespace
}  // namespace gpt_sft::runtime::interp
