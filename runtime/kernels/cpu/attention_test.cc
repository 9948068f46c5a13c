// The tiled attention against softmax(Q K^T / sqrt(D) + mask) V written out with an explicit
// [T,T] mask, in double (1e-12) and float; its VJP by central differences and against the
// textbook backward; segment ids (contiguous, crossing block boundaries, and interleaved),
// GQA, T not a multiple of the block, both backward schedules and any thread count
// giving the same bits.
#include "runtime/kernels/cpu/attention.h"

#include <cmath>
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

struct Naive {
  Vec out, dq, dk, dv;
};

// Forward and textbook backward with the whole probability matrix per (b, h).
Naive NaiveAttention(const Vec& q, const Vec& k, const Vec& v, const Vec& dout, const std::vector<int32_t>* seg,
                     AttentionShape s) {
  Naive r{Vec(q.size(), 0.0), Vec(q.size(), 0.0), Vec(k.size(), 0.0), Vec(v.size(), 0.0)};
  const int64_t rep = s.H / s.Hkv;
  const double scale = 1.0 / std::sqrt(double(s.D));
  auto Q = [&](int64_t b, int64_t t, int64_t h) { return ((b * s.T + t) * s.H + h) * s.D; };
  auto KV = [&](int64_t b, int64_t t, int64_t g) { return ((b * s.T + t) * s.Hkv + g) * s.D; };
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h) {
      const int64_t g = h / rep;
      std::vector<double> P(s.T * s.T, 0.0);
      for (int64_t i = 0; i < s.T; ++i) {
        double total = 0;
        for (int64_t j = 0; j < s.T; ++j) {
          const bool visible = j <= i && (!seg || (*seg)[b * s.T + i] == (*seg)[b * s.T + j]);
          if (!visible) continue;
          double sc = 0;
          for (int64_t d = 0; d < s.D; ++d) sc += q[Q(b, i, h) + d] * k[KV(b, j, g) + d];
          P[i * s.T + j] = std::exp(sc * scale);
          total += P[i * s.T + j];
        }
        for (int64_t j = 0; j < s.T; ++j) P[i * s.T + j] /= total;
      }
      for (int64_t i = 0; i < s.T; ++i)
        for (int64_t j = 0; j < s.T; ++j)
          for (int64_t d = 0; d < s.D; ++d) r.out[Q(b, i, h) + d] += P[i * s.T + j] * v[KV(b, j, g) + d];
      for (int64_t i = 0; i < s.T; ++i) {
        double delta = 0;
        for (int64_t d = 0; d < s.D; ++d) delta += dout[Q(b, i, h) + d] * r.out[Q(b, i, h) + d];
        for (int64_t j = 0; j < s.T; ++j) {
          const double p = P[i * s.T + j];
          if (p == 0) continue;
          double dp = 0;
          for (int64_t d = 0; d < s.D; ++d) dp += dout[Q(b, i, h) + d] * v[KV(b, j, g) + d];
          const double ds = p * (dp - delta) * scale;
          for (int64_t d = 0; d < s.D; ++d) {
            r.dv[KV(b, j, g) + d] += p * dout[Q(b, i, h) + d];
            r.dq[Q(b, i, h) + d] += ds * k[KV(b, j, g) + d];
            r.dk[KV(b, j, g) + d] += ds * q[Q(b, i, h) + d];
          }
        }
      }
    }
  return r;
}

size_t QSize(AttentionShape s) { return s.B * s.T * s.H * s.D; }
size_t KvSize(AttentionShape s) { return s.B * s.T * s.Hkv * s.D; }

template <typename T>
struct Result {
  std::vector<T> out, lse, dq, dk, dv;
};

template <typename T>
Result<T> RunKernel(const Vec& qd, const Vec& kd, const Vec& vd, const Vec& doutd, const std::vector<int32_t>* seg,
                 AttentionShape s, AttentionGradSchedule schedule = AttentionGradSchedule::kAuto) {
  const std::vector<T> q(qd.begin(), qd.end()), k(kd.begin(), kd.end()), v(vd.begin(), vd.end()),
      dout(doutd.begin(), doutd.end());
  Result<T> r{std::vector<T>(QSize(s)), std::vector<T>(s.B * s.H * s.T), std::vector<T>(QSize(s)),
           std::vector<T>(KvSize(s)), std::vector<T>(KvSize(s))};
  const int32_t* segp = seg ? seg->data() : nullptr;
  Attention(q.data(), k.data(), v.data(), segp, s, r.out.data(), r.lse.data());
  AttentionGrad(q.data(), k.data(), v.data(), segp, s, r.out.data(), r.lse.data(), dout.data(), r.dq.data(),
                r.dk.data(), r.dv.data(), schedule);
  return r;
}

template <typename T>
void ExpectNear(const std::vector<T>& got, const Vec& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << what << "[" << i << "]";
}

// Segment ids for [B, T]: row 0 contiguous segments crossing block boundaries (lengths 30,
// 70, 1, rest), row 1 interleaved ids (0, 1, 0, 1, ...) that no block range can separate.
std::vector<int32_t> MixedSegments(int64_t B, int64_t T) {
  std::vector<int32_t> seg(B * T);
  for (int64_t t = 0; t < T; ++t) seg[t] = t < 30 ? 0 : t < 100 ? 1 : t < 101 ? 2 : 3;
  for (int64_t b = 1; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) seg[b * T + t] = int32_t(t % 2);
  return seg;
}

class SmallShape : public ::testing::TestWithParam<bool> {};

// The brief's small odd shape: B=2, T=5, H=3, Hkv=1 (MQA), D=6.
TEST_P(SmallShape, ForwardMatchesNaiveAndVjpMatchesFiniteDifferences) {
  const bool segmented = GetParam();
  const AttentionShape s{2, 5, 3, 1, 6};
  const std::vector<int32_t> seg = {0, 0, 1, 1, 1, 0, 1, 1, 2, 2};
  const std::vector<int32_t>* segp = segmented ? &seg : nullptr;
  const Vec q = Random(QSize(s), 15), k = Random(KvSize(s), 16), v = Random(KvSize(s), 17),
            dout = Random(QSize(s), 18);
  const Result<double> r = RunKernel<double>(q, k, v, dout, segp, s);
  ExpectNear(r.out, NaiveAttention(q, k, v, dout, segp, s).out, 1e-12, "out");
  auto loss = [&](const Vec& qq, const Vec& kk, const Vec& vv) {
    Vec o(QSize(s)), l(s.B * s.H * s.T);
    Attention(qq.data(), kk.data(), vv.data(), segmented ? seg.data() : nullptr, s, o.data(), l.data());
    return Dot(dout, o);
  };
  const Vec dq(r.dq.begin(), r.dq.end()), dk(r.dk.begin(), r.dk.end()), dv(r.dv.begin(), r.dv.end());
  EXPECT_LT(MaxFdError(q, [&](const Vec& x) { return loss(x, k, v); }, dq), testing::kFdTolerance);
  EXPECT_LT(MaxFdError(k, [&](const Vec& x) { return loss(q, x, v); }, dk), testing::kFdTolerance);
  EXPECT_LT(MaxFdError(v, [&](const Vec& x) { return loss(q, k, x); }, dv), testing::kFdTolerance);
}

INSTANTIATE_TEST_SUITE_P(CausalAndSegmented, SmallShape, ::testing::Bool());

// Two blocks (T = 70 = 64 + 6), so the VJP crosses block pairs; GQA with 2 heads per kv head.
TEST(Attention, VjpAcrossBlocksMatchesFiniteDifferences) {
  const AttentionShape s{1, 70, 2, 1, 4};
  std::vector<int32_t> seg(70);
  for (int t = 0; t < 70; ++t) seg[t] = t < 50 ? 0 : 1;
  const Vec q = Random(QSize(s), 21), k = Random(KvSize(s), 22), v = Random(KvSize(s), 23),
            dout = Random(QSize(s), 24);
  const Result<double> r = RunKernel<double>(q, k, v, dout, &seg, s);
  auto loss = [&](const Vec& qq, const Vec& kk, const Vec& vv) {
    Vec o(QSize(s)), l(s.B * s.H * s.T);
    Attention(qq.data(), kk.data(), vv.data(), seg.data(), s, o.data(), l.data());
    return Dot(dout, o);
  };
  const Vec dq(r.dq.begin(), r.dq.end()), dk(r.dk.begin(), r.dk.end()), dv(r.dv.begin(), r.dv.end());
  EXPECT_LT(MaxFdError(q, [&](const Vec& x) { return loss(x, k, v); }, dq), testing::kFdTolerance);
  EXPECT_LT(MaxFdError(k, [&](const Vec& x) { return loss(q, x, v); }, dk), testing::kFdTolerance);
  EXPECT_LT(MaxFdError(v, [&](const Vec& x) { return loss(q, k, x); }, dv), testing::kFdTolerance);
}

class ManyBlocks : public ::testing::TestWithParam<bool> {};

// T = 150: three blocks, the last partial; forward and backward against the naive ones.
TEST_P(ManyBlocks, DoubleAndFloatMatchTheNaiveForwardAndBackward) {
  const bool segmented = GetParam();
  const AttentionShape s{2, 150, 4, 2, 8};
  const std::vector<int32_t> seg = MixedSegments(2, 150);
  const std::vector<int32_t>* segp = segmented ? &seg : nullptr;
  const Vec q = Random(QSize(s), 31, 2.0), k = Random(KvSize(s), 32, 2.0), v = Random(KvSize(s), 33),
            dout = Random(QSize(s), 34);
  const Naive want = NaiveAttention(q, k, v, dout, segp, s);
  const Result<double> d = RunKernel<double>(q, k, v, dout, segp, s);
  ExpectNear(d.out, want.out, 1e-12, "out");
  ExpectNear(d.dq, want.dq, 1e-12, "dq");
  ExpectNear(d.dk, want.dk, 1e-12, "dk");
  ExpectNear(d.dv, want.dv, 1e-12, "dv");
  const Result<float> f = RunKernel<float>(q, k, v, dout, segp, s);
  ExpectNear(f.out, want.out, 2e-6, "float out");
  ExpectNear(f.dq, want.dq, 1e-5, "float dq");
  ExpectNear(f.dk, want.dk, 1e-5, "float dk");
  ExpectNear(f.dv, want.dv, 1e-5, "float dv");
  // lse is log sum_j exp(s_ij) over visible j: check one row by hand (b=1, h=3, t=149).
  double sum = 0;
  for (int64_t j = 0; j <= 149; ++j) {
    if (segmented && seg[150 + j] != seg[150 + 149]) continue;
    double sc = 0;
    for (int64_t d = 0; d < 8; ++d) sc += q[((150 + 149) * 4 + 3) * 8 + d] * k[((150 + j) * 2 + 1) * 8 + d];
    sum += std::exp(sc / std::sqrt(8.0));
  }
  EXPECT_NEAR(d.lse[(1 * 4 + 3) * 150 + 149], std::log(sum), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(CausalAndSegmented, ManyBlocks, ::testing::Bool());

// The two backward schedules and the thread count change only who computes what.
TEST(Attention, SchedulesAndThreadCountsGiveIdenticalBits) {
  const AttentionShape s{2, 200, 2, 1, 16};
  const std::vector<int32_t> seg = MixedSegments(2, 200);
  const Vec q = Random(QSize(s), 41), k = Random(KvSize(s), 42), v = Random(KvSize(s), 43),
            dout = Random(QSize(s), 44);
  const int saved = NumThreads();
  SetNumThreads(1);
  const Result<float> base = RunKernel<float>(q, k, v, dout, &seg, s, AttentionGradSchedule::kFused);
  for (int threads : {1, 3}) {
    SetNumThreads(threads);
    for (auto schedule : {AttentionGradSchedule::kFused, AttentionGradSchedule::kTwoPass}) {
      const Result<float> r = RunKernel<float>(q, k, v, dout, &seg, s, schedule);
      EXPECT_EQ(r.out, base.out);
      EXPECT_EQ(r.lse, base.lse);
      EXPECT_EQ(r.dq, base.dq);
      EXPECT_EQ(r.dk, base.dk);
      EXPECT_EQ(r.dv, base.dv);
    }
  }
  SetNumThreads(saved);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
