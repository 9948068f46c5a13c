// CachedAttention against the formula written out with an explicit bottom-right mask, in
// double; with Tq == Tk it must equal the flash kernel (attention.h) and with Tq < Tk the
// last Tq rows of the flash kernel over all Tk positions (the KV-cache identity decoding
// relies on); GQA; results independent of the thread count.
#include "runtime/kernels/cpu/cached_attention.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::Random;
using testing::Vec;

Vec Naive(const Vec& q, const Vec& k, const Vec& v, CachedAttentionShape s) {
  Vec out(q.size(), 0.0);
  const double scale = 1.0 / std::sqrt(double(s.D));
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h)
      for (int64_t i = 0; i < s.Tq; ++i) {
        const int64_t g = h / (s.H / s.Hkv);
        std::vector<double> p(s.Tk, 0.0);
        double total = 0;
        for (int64_t j = 0; j < s.Tk; ++j) {
          if (j > s.Tk - s.Tq + i) continue;  // bottom-right causal
          double dot = 0;
          for (int64_t d = 0; d < s.D; ++d)
            dot += q[((b * s.Tq + i) * s.H + h) * s.D + d] * k[((b * s.Tk + j) * s.Hkv + g) * s.D + d];
          p[j] = std::exp(dot * scale);
          total += p[j];
        }
        for (int64_t j = 0; j < s.Tk; ++j)
          for (int64_t d = 0; d < s.D; ++d)
            out[((b * s.Tq + i) * s.H + h) * s.D + d] += p[j] / total * v[((b * s.Tk + j) * s.Hkv + g) * s.D + d];
      }
  return out;
}

double MaxAbsDiff(const Vec& a, const Vec& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

TEST(CachedAttentionTest, MatchesTheFormulaInDouble) {
  for (CachedAttentionShape s : {CachedAttentionShape{2, 1, 7, 4, 2, 8}, CachedAttentionShape{1, 3, 10, 2, 2, 4},
                                 CachedAttentionShape{1, 5, 5, 3, 1, 6}}) {
    const Vec q = Random(s.B * s.Tq * s.H * s.D, 1), k = Random(s.B * s.Tk * s.Hkv * s.D, 2),
              v = Random(s.B * s.Tk * s.Hkv * s.D, 3);
    Vec out(q.size());
    CachedAttention(q.data(), k.data(), v.data(), s, 1.0 / std::sqrt(double(s.D)), out.data());
    EXPECT_LT(MaxAbsDiff(out, Naive(q, k, v, s)), 1e-12) << "Tq=" << s.Tq << " Tk=" << s.Tk;
  }
}

TEST(CachedAttentionTest, LastRowsOfFullCausalAttention) {
  // Flash attention over all T positions; CachedAttention of the last Tq queries over the
  // same keys must give its last Tq rows. T crosses the flash kernel's block size.
  const AttentionShape full{1, 70, 4, 2, 16};
  const Vec q = Random(full.B * full.T * full.H * full.D, 4), k = Random(full.B * full.T * full.Hkv * full.D, 5),
            v = Random(full.B * full.T * full.Hkv * full.D, 6);
  std::vector<float> qf(q.begin(), q.end()), kf(k.begin(), k.end()), vf(v.begin(), v.end());
  std::vector<float> flash(qf.size()), lse(full.B * full.H * full.T);
  Attention(qf.data(), kf.data(), vf.data(), nullptr, full, flash.data(), lse.data());
  for (int64_t tq : {1, 3, 70}) {
    const int64_t row = full.H * full.D;
    std::vector<float> out(tq * row);
    CachedAttention(qf.data() + (full.T - tq) * row, kf.data(), vf.data(), {1, tq, full.T, full.H, full.Hkv, full.D},
                    1.0 / std::sqrt(double(full.D)), out.data());
    for (int64_t i = 0; i < tq * row; ++i) {
      ASSERT_NEAR(out[i], flash[(full.T - tq) * row + i], 1e-5) << "Tq=" << tq << " element " << i;
    }
  }
}

TEST(CachedAttentionTest, ScaleAndThreadCountIndependence) {
  const CachedAttentionShape s{2, 2, 9, 4, 4, 8};
  const Vec q = Random(s.B * s.Tq * s.H * s.D, 7), k = Random(s.B * s.Tk * s.Hkv * s.D, 8),
            v = Random(s.B * s.Tk * s.Hkv * s.D, 9);
  // scale 2/sqrt(D) equals the default scale on 2q.
  Vec q2 = q;
  for (double& x : q2) x *= 2;
  Vec a(q.size()), b(q.size());
  CachedAttention(q.data(), k.data(), v.data(), s, 2.0 / std::sqrt(double(s.D)), a.data());
  EXPECT_LT(MaxAbsDiff(a, Naive(q2, k, v, s)), 1e-12);
  const int threads = NumThreads();
  SetNumThreads(1);
  CachedAttention(q.data(), k.data(), v.data(), s, 2.0 / std::sqrt(double(s.D)), b.data());
  SetNumThreads(threads);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
