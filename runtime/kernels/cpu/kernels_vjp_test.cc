// Finite-difference checks, in float64, of every kernel's VJP: for random x and a random
// cotangent dy, the VJP's dx must equal the central difference of L(x) = <dy, f(x)>.
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/embedding.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/rotary.h"

namespace gpt_sft::runtime::kernels {
namespace {

using Vec = std::vector<double>;

Vec Random(size_t n, uint32_t seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  Vec v(n);
  for (double& x : v) x = u(rng);
  return v;
}

double Dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Worst relative error between `analytic` and the central differences of `loss` at x.
double MaxFdError(Vec x, const std::function<double(const Vec&)>& loss, const Vec& analytic, double h = 1e-6) {
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double orig = x[i];
    x[i] = orig + h;
    const double up = loss(x);
    x[i] = orig - h;
    const double down = loss(x);
    x[i] = orig;
    const double fd = (up - down) / (2 * h);
    // The floor keeps an exactly-zero gradient (a query that sees only itself) from
    // turning the finite difference's rounding noise (~1e-10) into a large ratio.
    worst = std::max(worst, std::abs(fd - analytic[i]) / std::max(1e-3, std::abs(fd) + std::abs(analytic[i])));
  }
  return worst;
}

constexpr double kTol = 1e-6;

TEST(KernelVjp, ReluSquare) {
  Vec x = Random(37, 1), dy = Random(37, 2), dx(37);
  for (double& v : x) v += (v > 0 ? 0.05 : -0.05);  // keep away from the kink at 0
  ReluSquareGrad(x.data(), dy.data(), dx.data(), 37);
  auto loss = [&](const Vec& xs) { Vec y(37); ReluSquare(xs.data(), y.data(), 37); return Dot(dy, y); };
  EXPECT_LT(MaxFdError(x, loss, dx), kTol);
}

TEST(KernelVjp, Softcap) {
  Vec x = Random(29, 3, 40.0), dy = Random(29, 4), y(29), dx(29);
  Softcap(x.data(), y.data(), 29, 15.0);
  SoftcapGrad(y.data(), dy.data(), dx.data(), 29, 15.0);
  auto loss = [&](const Vec& xs) { Vec o(29); Softcap(xs.data(), o.data(), 29, 15.0); return Dot(dy, o); };
  EXPECT_LT(MaxFdError(x, loss, dx), kTol);
  EXPECT_NEAR(y[0], 15.0 * std::tanh(x[0] / 15.0), 1e-12);
}

TEST(KernelVjp, RmsNorm) {
  const int64_t rows = 5, dim = 7;
  Vec x = Random(rows * dim, 5), dy = Random(rows * dim, 6), dx(rows * dim);
  RmsNormGrad(x.data(), dy.data(), dx.data(), rows, dim);
  auto loss = [&](const Vec& xs) { Vec y(xs.size()); RmsNorm(xs.data(), y.data(), rows, dim); return Dot(dy, y); };
  EXPECT_LT(MaxFdError(x, loss, dx), kTol);
  // Forward against the definition.
  Vec y(rows * dim);
  RmsNorm(x.data(), y.data(), rows, dim);
  double ss = 0;
  for (int i = 0; i < dim; ++i) ss += x[i] * x[i];
  EXPECT_NEAR(y[3], x[3] / std::sqrt(ss / dim + kRmsNormEps), 1e-12);
}

TEST(KernelVjp, Rotary) {
  const RotaryShape s{2, 5, 3, 6};
  const size_t n = 2 * 5 * 3 * 6;
  std::vector<int32_t> pos = {0, 1, 2, 3, 4, 0, 1, 7, 0, 2};  // restarting positions (packed rows)
  Vec x = Random(n, 7), dy = Random(n, 8), dx(n);
  RotaryGrad(dy.data(), pos.data(), dx.data(), s);
  auto loss = [&](const Vec& xs) { Vec y(n); Rotary(xs.data(), pos.data(), y.data(), s); return Dot(dy, y); };
  EXPECT_LT(MaxFdError(x, loss, dx), kTol);
  // Position 0 is the identity; the -theta convention: y1 = x1 cos + x2 sin.
  Vec y(n);
  Rotary(x.data(), pos.data(), y.data(), s);
  for (int d = 0; d < 6; ++d) EXPECT_DOUBLE_EQ(y[d], x[d]);
  const int64_t o = 1 * 3 * 6;  // (b=0, t=1, h=0), j = 0: angle = 1
  EXPECT_NEAR(y[o], x[o] * std::cos(1.0) + x[o + 3] * std::sin(1.0), 1e-12);
}

TEST(KernelVjp, CrossEntropyIgnoresMinusOne) {
  const int64_t N = 6, V = 5;
  Vec logits = Random(N * V, 9, 3.0), dlogits(N * V);
  std::vector<int32_t> targets = {1, -1, 4, 0, -1, 2};
  CrossEntropyGrad(logits.data(), targets.data(), N, V, 1.0, dlogits.data());
  auto loss = [&](const Vec& l) { return CrossEntropy(l.data(), targets.data(), N, V).loss; };
  EXPECT_LT(MaxFdError(logits, loss, dlogits), kTol);
  EXPECT_EQ(CrossEntropy(logits.data(), targets.data(), N, V).count, 4);
  for (int v = 0; v < V; ++v) EXPECT_EQ(dlogits[1 * V + v], 0.0);
  // Hand-worked: uniform logits give log V.
  Vec zeros(V, 0.0);
  int32_t t = 3;
  EXPECT_NEAR(CrossEntropy(zeros.data(), &t, 1, V).loss, std::log(5.0), 1e-12);
}

TEST(KernelVjp, Matmul) {
  const int64_t M = 4, N = 3, K = 5;
  Vec x = Random(M * K, 10), w = Random(N * K, 11), dy = Random(M * N, 12), dx(M * K), dw(N * K);
  MatmulGradInput(dy.data(), w.data(), dx.data(), M, N, K);
  MatmulGradWeight(dy.data(), x.data(), dw.data(), M, N, K, /*accumulate=*/false);
  auto loss_x = [&](const Vec& xs) { Vec y(M * N); Matmul(xs.data(), w.data(), y.data(), M, N, K); return Dot(dy, y); };
  auto loss_w = [&](const Vec& ws) { Vec y(M * N); Matmul(x.data(), ws.data(), y.data(), M, N, K); return Dot(dy, y); };
  EXPECT_LT(MaxFdError(x, loss_x, dx), kTol);
  EXPECT_LT(MaxFdError(w, loss_w, dw), kTol);
  // y = x w^T by hand, and accumulation adds.
  Vec y(M * N);
  Matmul(x.data(), w.data(), y.data(), M, N, K);
  double y01 = 0;
  for (int k = 0; k < K; ++k) y01 += x[k] * w[1 * K + k];
  EXPECT_NEAR(y[1], y01, 1e-12);
  Vec dw2 = dw;
  MatmulGradWeight(dy.data(), x.data(), dw2.data(), M, N, K, /*accumulate=*/true);
  EXPECT_NEAR(dw2[7], 2 * dw[7], 1e-12);
}

TEST(KernelVjp, EmbeddingScatterAdds) {
  const int64_t V = 4, C = 3, N = 5;
  std::vector<int32_t> ids = {2, 0, 2, 3, 2};
  Vec table = Random(V * C, 13), dout = Random(N * C, 14), dtable(V * C, 0.0);
  EmbeddingGrad(dout.data(), ids.data(), dtable.data(), N, C);
  auto loss = [&](const Vec& t) { Vec o(N * C); Embedding(t.data(), ids.data(), o.data(), N, C); return Dot(dout, o); };
  EXPECT_LT(MaxFdError(table, loss, dtable), kTol);
  EXPECT_EQ(dtable[1 * C], 0.0);  // row 1 is never looked up
}

// softmax(q k^T / sqrt(D) + mask) v, written out with an explicit mask.
Vec NaiveAttention(const Vec& q, const Vec& k, const Vec& v, const std::vector<int32_t>* seg, AttentionShape s) {
  Vec out(q.size(), 0.0);
  const int64_t rep = s.H / s.Hkv;
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h)
      for (int64_t i = 0; i < s.T; ++i) {
        std::vector<double> w(s.T, 0.0);
        double total = 0;
        for (int64_t j = 0; j < s.T; ++j) {
          const bool ok = j <= i && (!seg || (*seg)[b * s.T + i] == (*seg)[b * s.T + j]);
          if (!ok) continue;
          double sc = 0;
          for (int64_t d = 0; d < s.D; ++d)
            sc += q[((b * s.T + i) * s.H + h) * s.D + d] * k[((b * s.T + j) * s.Hkv + h / rep) * s.D + d];
          w[j] = std::exp(sc / std::sqrt(double(s.D)));
          total += w[j];
        }
        for (int64_t j = 0; j < s.T; ++j)
          for (int64_t d = 0; d < s.D; ++d)
            out[((b * s.T + i) * s.H + h) * s.D + d] += w[j] / total * v[((b * s.T + j) * s.Hkv + h / rep) * s.D + d];
      }
  return out;
}

class AttentionCases : public ::testing::TestWithParam<bool> {};

TEST_P(AttentionCases, ForwardMatchesNaiveAndVjpMatchesFiniteDifferences) {
  const bool segmented = GetParam();
  const AttentionShape s{2, 5, 4, 2, 3};  // odd T, GQA with 2 query heads per kv head
  const size_t nq = 2 * 5 * 4 * 3, nkv = 2 * 5 * 2 * 3;
  std::vector<int32_t> seg = {0, 0, 1, 1, 1, 0, 1, 1, 2, 2};
  const int32_t* segp = segmented ? seg.data() : nullptr;
  Vec q = Random(nq, 15), k = Random(nkv, 16), v = Random(nkv, 17), dout = Random(nq, 18);
  Vec out(nq), lse(2 * 4 * 5), dq(nq), dk(nkv), dv(nkv);
  Attention(q.data(), k.data(), v.data(), segp, s, out.data(), lse.data());
  const Vec naive = NaiveAttention(q, k, v, segmented ? &seg : nullptr, s);
  for (size_t i = 0; i < nq; ++i) ASSERT_NEAR(out[i], naive[i], 1e-12) << i;
  AttentionGrad(q.data(), k.data(), v.data(), segp, s, out.data(), lse.data(), dout.data(), dq.data(), dk.data(),
                dv.data());
  auto run = [&](const Vec& qq, const Vec& kk, const Vec& vv) {
    Vec o(nq), l(2 * 4 * 5);
    Attention(qq.data(), kk.data(), vv.data(), segp, s, o.data(), l.data());
    return Dot(dout, o);
  };
  EXPECT_LT(MaxFdError(q, [&](const Vec& x) { return run(x, k, v); }, dq), kTol);
  EXPECT_LT(MaxFdError(k, [&](const Vec& x) { return run(q, x, v); }, dk), kTol);
  EXPECT_LT(MaxFdError(v, [&](const Vec& x) { return run(q, k, x); }, dv), kTol);
}

INSTANTIATE_TEST_SUITE_P(CausalAndSegmented, AttentionCases, ::testing::Bool());

}  // namespace
}  // namespace gpt_sft::runtime::kernels
