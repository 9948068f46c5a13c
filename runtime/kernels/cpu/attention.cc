// Implements Attention and AttentionGrad as exact, simple loops over (b, h, i, j<=i).
// Speed is the compiled path's job (a tiled kernel); this one defines the numbers.
#include "runtime/kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace gpt_sft::runtime::kernels {
namespace {

struct Index {
  AttentionShape s;
  int64_t Q(int64_t b, int64_t t, int64_t h) const { return ((b * s.T + t) * s.H + h) * s.D; }
  int64_t KV(int64_t b, int64_t t, int64_t g) const { return ((b * s.T + t) * s.Hkv + g) * s.D; }
  int64_t L(int64_t b, int64_t h, int64_t t) const { return (b * s.H + h) * s.T + t; }
};

bool Visible(const int32_t* seg, int64_t b, int64_t T, int64_t i, int64_t j) {
  return j <= i && (seg == nullptr || seg[b * T + i] == seg[b * T + j]);
}

template <typename T>
double Score(const T* q, const T* k, int64_t D, double scale) {
  double s = 0;
  for (int64_t d = 0; d < D; ++d) s += double(q[d]) * k[d];
  return s * scale;
}

}  // namespace

template <typename T>
void Attention(const T* q, const T* k, const T* v, const int32_t* seg, AttentionShape s, T* out, T* lse) {
  const Index ix{s};
  const int64_t rep = s.H / s.Hkv;
  const double scale = 1.0 / std::sqrt(double(s.D));
  std::vector<double> acc(s.D);
  for (int64_t b = 0; b < s.B; ++b) {
    for (int64_t h = 0; h < s.H; ++h) {
      const int64_t g = h / rep;
      for (int64_t i = 0; i < s.T; ++i) {
        const T* qi = q + ix.Q(b, i, h);
        double m = -std::numeric_limits<double>::infinity(), denom = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j <= i; ++j) {
          if (!Visible(seg, b, s.T, i, j)) continue;
          const double sc = Score(qi, k + ix.KV(b, j, g), s.D, scale);
          const double m_new = std::max(m, sc);
          const double correction = std::exp(m - m_new), p = std::exp(sc - m_new);
          denom = denom * correction + p;
          const T* vj = v + ix.KV(b, j, g);
          for (int64_t d = 0; d < s.D; ++d) acc[d] = acc[d] * correction + p * vj[d];
          m = m_new;
        }
        // Every query sees at least itself, so denom > 0.
        T* oi = out + ix.Q(b, i, h);
        for (int64_t d = 0; d < s.D; ++d) oi[d] = T(acc[d] / denom);
        lse[ix.L(b, h, i)] = T(m + std::log(denom));
      }
    }
  }
}

// With P_ij = exp(S_ij - lse_i):  dV_j += P_ij dO_i;  dP_ij = dO_i . V_j;
// dS_ij = P_ij (dP_ij - D_i), D_i = dO_i . O_i;  dQ_i += dS_ij K_j scale;  dK_j += dS_ij Q_i scale.
template <typename T>
void AttentionGrad(const T* q, const T* k, const T* v, const int32_t* seg, AttentionShape s, const T* out,
                   const T* lse, const T* dout, T* dq, T* dk, T* dv) {
  const Index ix{s};
  const int64_t rep = s.H / s.Hkv;
  const double scale = 1.0 / std::sqrt(double(s.D));
  const int64_t nq = s.B * s.T * s.H * s.D, nkv = s.B * s.T * s.Hkv * s.D;
  std::vector<double> gq(nq, 0.0), gk(nkv, 0.0), gv(nkv, 0.0);
  for (int64_t b = 0; b < s.B; ++b) {
    for (int64_t h = 0; h < s.H; ++h) {
      const int64_t g = h / rep;
      for (int64_t i = 0; i < s.T; ++i) {
        const T* qi = q + ix.Q(b, i, h);
        const T* doi = dout + ix.Q(b, i, h);
        const double Di = Score(doi, out + ix.Q(b, i, h), s.D, 1.0);
        const double lse_i = lse[ix.L(b, h, i)];
        for (int64_t j = 0; j <= i; ++j) {
          if (!Visible(seg, b, s.T, i, j)) continue;
          const T* kj = k + ix.KV(b, j, g);
          const T* vj = v + ix.KV(b, j, g);
          const double p = std::exp(Score(qi, kj, s.D, scale) - lse_i);
          const double dp = Score(doi, vj, s.D, 1.0);
          const double ds = p * (dp - Di) * scale;
          for (int64_t d = 0; d < s.D; ++d) {
            gv[ix.KV(b, j, g) + d] += p * doi[d];
            gq[ix.Q(b, i, h) + d] += ds * kj[d];
            gk[ix.KV(b, j, g) + d] += ds * qi[d];
          }
        }
      }
    }
  }
  for (int64_t n = 0; n < nq; ++n) dq[n] = T(gq[n]);
  for (int64_t n = 0; n < nkv; ++n) dk[n] = T(gk[n]), dv[n] = T(gv[n]);
}

template void Attention<float>(const float*, const float*, const float*, const int32_t*, AttentionShape, float*, float*);
template void Attention<double>(const double*, const double*, const double*, const int32_t*, AttentionShape, double*,
                                double*);
template void AttentionGrad<float>(const float*, const float*, const float*, const int32_t*, AttentionShape,
                                   const float*, const float*, const float*, float*, float*, float*);
template void AttentionGrad<double>(const double*, const double*, const double*, const int32_t*, AttentionShape,
                                    const double*, const double*, const double*, double*, double*, double*);

}  // namespace gpt_sft::runtime::kernels
