// The tiled attention against softmax(Q K^T / sqrt(D) + mask) V written out with an explicit
// [T,T] mask, in double (1e-12) and float; its VJP by central differences and against the
// textbook backward; segment ids (contiguous, crossing block boundaries, and interleaved),
// GQA, T not a multiple of the block, both backward schedules and any thread count
// giving the same bits.
#include "runtime/kernels/cpu/attention.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "model/round_to_bf16.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/tile_gemm_bf16.h"

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

// --- bf16 inputs (AttentionBf16Inputs) ------------------------------------------------------

Vec RandomBf16(size_t n, uint32_t seed, double scale = 1.0) {
  Vec v = Random(n, seed, scale);
  for (double& x : v) x = compiler::RoundToBf16(float(x));
  return v;
}

Result<float> RunBf16Kernel(const Vec& qd, const Vec& kd, const Vec& vd, const Vec& doutd,
                            const std::vector<int32_t>* seg, AttentionShape s,
                            AttentionGradSchedule schedule = AttentionGradSchedule::kAuto) {
  const std::vector<float> q(qd.begin(), qd.end()), k(kd.begin(), kd.end()), v(vd.begin(), vd.end()),
      dout(doutd.begin(), doutd.end());
  Result<float> r{std::vector<float>(QSize(s)), std::vector<float>(s.B * s.H * s.T), std::vector<float>(QSize(s)),
                  std::vector<float>(KvSize(s)), std::vector<float>(KvSize(s))};
  const int32_t* segp = seg ? seg->data() : nullptr;
  AttentionBf16Inputs(q.data(), k.data(), v.data(), segp, s, r.out.data(), r.lse.data());
  AttentionGradBf16Inputs(q.data(), k.data(), v.data(), segp, s, r.out.data(), r.lse.data(), dout.data(),
                          r.dq.data(), r.dk.data(), r.dv.data(), schedule);
  return r;
}

// |got - want| / |want|, norm-wise.
template <typename T>
double RelativeError(const std::vector<T>& got, const Vec& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / den);
}

class Bf16Inputs : public ::testing::TestWithParam<bool> {};

// On bf16 operands the bf16 kernel stays within bf16's rounding of the exact (double)
// attention, while visibly rounding (further from it than the f32 kernel on the same
// values). Measured on the AVX512_BF16 tile kernel (causal / segmented): out 9.9e-4 /
// 8.7e-4, dq 2.1e-3 / 2.3e-3, dk 1.9e-3 / 2.1e-3, dv 1.5e-3 / 1.5e-3; the f32 kernel's
// below 4e-7.
TEST_P(Bf16Inputs, StayWithinBf16RoundingOfTheExactAttention) {
  const bool segmented = GetParam();
  const AttentionShape s{2, 150, 4, 2, 16};
  const std::vector<int32_t> seg = MixedSegments(2, 150);
  const std::vector<int32_t>* segp = segmented ? &seg : nullptr;
  const Vec q = RandomBf16(QSize(s), 51, 2.0), k = RandomBf16(KvSize(s), 52, 2.0), v = RandomBf16(KvSize(s), 53),
            dout = RandomBf16(QSize(s), 54);
  const Naive want = NaiveAttention(q, k, v, dout, segp, s);
  const Result<float> bf16 = RunBf16Kernel(q, k, v, dout, segp, s);
  const Result<float> f32 = RunKernel<float>(q, k, v, dout, segp, s);
  const struct {
    const char* name;
    const std::vector<float>& bf16;
    const std::vector<float>& f32;
    const Vec& want;
  } checks[] = {{"out", bf16.out, f32.out, want.out},
                {"dq", bf16.dq, f32.dq, want.dq},
                {"dk", bf16.dk, f32.dk, want.dk},
                {"dv", bf16.dv, f32.dv, want.dv}};
  for (const auto& c : checks) {
    const double error = RelativeError(c.bf16, c.want), f32_error = RelativeError(c.f32, c.want);
    EXPECT_LT(error, 5e-3) << c.name << " (" << Bf16TileKernelName() << ")";
    EXPECT_GT(error, 10 * f32_error) << c.name << ": the bf16 kernel rounds nothing?";
  }
  // lse: sums of the same exact products, in another order on the AVX512_BF16 kernel.
  for (size_t i = 0; i < f32.lse.size(); ++i) ASSERT_NEAR(bf16.lse[i], f32.lse[i], 1e-5) << "lse[" << i << "]";
}

INSTANTIATE_TEST_SUITE_P(CausalAndSegmented, Bf16Inputs, ::testing::Bool());

// One key block (T <= 64), so the running max is the row max: the output is
// sum_j bf16(p_j) v_j / sum_j p_j with p_j = exp(s_j / sqrt(D) - max) in f32. A double
// statement of exactly that is much closer to the kernel than the unrounded attention.
TEST(Attention, Bf16RoundsTheProbabilitiesBeforePV) {
  const AttentionShape s{1, 48, 2, 2, 32};
  const Vec q = RandomBf16(QSize(s), 61, 2.0), k = RandomBf16(KvSize(s), 62, 2.0), v = RandomBf16(KvSize(s), 63),
            dout = RandomBf16(QSize(s), 64);
  const Result<float> got = RunBf16Kernel(q, k, v, dout, nullptr, s);
  Vec rounded(QSize(s), 0.0);
  const double scale = 1.0 / std::sqrt(32.0);
  for (int64_t h = 0; h < s.H; ++h)
    for (int64_t i = 0; i < s.T; ++i) {
      Vec sc(i + 1);
      double m = -1e300, l = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < s.D; ++d) dot += q[(i * s.H + h) * s.D + d] * k[(j * s.H + h) * s.D + d];
        sc[j] = dot * scale;
        m = std::max(m, sc[j]);
      }
      for (int64_t j = 0; j <= i; ++j) {
        const double p = std::exp(sc[j] - double(float(m)));
        l += p;
        const double pb = compiler::RoundToBf16(float(p));
        for (int64_t d = 0; d < s.D; ++d) rounded[(i * s.H + h) * s.D + d] += pb * v[(j * s.H + h) * s.D + d];
      }
      for (int64_t d = 0; d < s.D; ++d) rounded[(i * s.H + h) * s.D + d] /= l;
    }
  const double to_rounded = RelativeError(got.out, rounded);
  const double to_exact = RelativeError(got.out, NaiveAttention(q, k, v, dout, nullptr, s).out);
  EXPECT_LT(to_rounded, to_exact / 5) << "to the rounded statement " << to_rounded << ", to the exact " << to_exact;
}

// The schedules and thread counts change only who computes what, in bf16 too.
TEST(Attention, Bf16SchedulesAndThreadCountsGiveIdenticalBits) {
  const AttentionShape s{2, 200, 2, 1, 16};
  const std::vector<int32_t> seg = MixedSegments(2, 200);
  const Vec q = RandomBf16(QSize(s), 71), k = RandomBf16(KvSize(s), 72), v = RandomBf16(KvSize(s), 73),
            dout = RandomBf16(QSize(s), 74);
  const int saved = NumThreads();
  SetNumThreads(1);
  const Result<float> base = RunBf16Kernel(q, k, v, dout, &seg, s, AttentionGradSchedule::kFused);
  for (int threads : {1, 3}) {
    SetNumThreads(threads);
    for (auto schedule : {AttentionGradSchedule::kFused, AttentionGradSchedule::kTwoPass}) {
      const Result<float> r = RunBf16Kernel(q, k, v, dout, &seg, s, schedule);
      EXPECT_EQ(r.out, base.out);
      EXPECT_EQ(r.lse, base.lse);
      EXPECT_EQ(r.dq, base.dq);
      EXPECT_EQ(r.dk, base.dk);
      EXPECT_EQ(r.dv, base.dv);
    }
  }
  SetNumThreads(saved);
}

// dv written prepared for a bf16 GEMM (the compiled step's attention_grad_bf16_prepared_dv) is
// the f32 dv prepared afterwards, byte for byte, on each GEMM kernel and schedule; dq and dk
// are unchanged.
TEST(Attention, Bf16PreparedDvIsTheF32DvPrepared) {
  const AttentionShape s{2, 200, 4, 2, 16};
  const std::vector<int32_t> seg = MixedSegments(2, 200);
  const Vec qd = RandomBf16(QSize(s), 81), kd = RandomBf16(KvSize(s), 82), vd = RandomBf16(KvSize(s), 83),
            doutd = RandomBf16(QSize(s), 84);
  const std::vector<float> q(qd.begin(), qd.end()), k(kd.begin(), kd.end()), v(vd.begin(), vd.end()),
      dout(doutd.begin(), doutd.end());
  for (auto schedule : {AttentionGradSchedule::kFused, AttentionGradSchedule::kTwoPass}) {
    const Result<float> f32 = RunBf16Kernel(qd, kd, vd, doutd, &seg, s, schedule);
    for (Bf16Gemm gemm : SupportedBf16Gemms()) {
      SCOPED_TRACE(Bf16GemmName(gemm));
      const int64_t bytes = KvSize(s) * Bf16PreparedElementBytes(gemm);
      std::vector<char> want(bytes), got(KvSize(s) * sizeof(float), char(0x5a));
      PrepareBf16Operand(gemm, f32.dv.data(), KvSize(s), want.data());
      std::vector<float> dq(QSize(s)), dk(KvSize(s));
      const ScratchBuffer scratch(AttentionGradBf16InputsWorkspaceBytes(s, true));
      AttentionGradBf16InputsPreparedDv(q.data(), k.data(), v.data(), seg.data(), s, f32.out.data(), f32.lse.data(),
                                        dout.data(), dq.data(), dk.data(), gemm, got.data(), scratch.get(), schedule);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), bytes), 0);
      EXPECT_EQ(dq, f32.dq);
      EXPECT_EQ(dk, f32.dk);
    }
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
