// Implements dense attention; each task owns one (b, kv head): its query heads' rows of
// out/lse/dq and its rows of dk/dv, so no two tasks write the same element.
#include "runtime/interpreter/ops/dense_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::interp {
namespace {

struct Layout {
  kernels::AttentionShape s;
  // Offsets of q/out/dq [B,T,H,D], k/v [B,T,Hkv,D], lse [B,H,T].
  int64_t Q(int64_t b, int64_t t, int64_t h) const { return ((b * s.T + t) * s.H + h) * s.D; }
  int64_t K(int64_t b, int64_t t, int64_t g) const { return ((b * s.T + t) * s.Hkv + g) * s.D; }
  int64_t L(int64_t b, int64_t h, int64_t t) const { return (b * s.H + h) * s.T + t; }
};

bool Visible(const int32_t* seg, int64_t row, int64_t i, int64_t j, bool causal) {
  if (causal && j > i) return false;
  return seg == nullptr || seg[row + i] == seg[row + j];
}

template <typename T>
double Dot(const T* a, const T* b, int64_t n) {
  double sum = 0;
  for (int64_t d = 0; d < n; ++d) sum += double(a[d]) * double(b[d]);
  return sum;
}

/// Scores of query i against every key (masked: -inf), for (b, h) reading kv head g.
template <typename T>
void Scores(const T* q, const T* k, const int32_t* seg, const Layout& l, int64_t b, int64_t h, int64_t g,
            int64_t i, bool causal, double scale, std::vector<double>& row) {
  for (int64_t j = 0; j < l.s.T; ++j) {
    row[j] = Visible(seg, b * l.s.T, i, j, causal) ? scale * Dot(q + l.Q(b, i, h), k + l.K(b, j, g), l.s.D)
                                                   : -std::numeric_limits<double>::infinity();
  }
}

}  // namespace

template <typename T>
void DenseAttention(const T* q, const T* k, const T* v, const int32_t* segment_ids, kernels::AttentionShape s,
                    bool causal, double scale, T* out, T* lse) {
  const Layout l{s};
  const int64_t rep = s.H / s.Hkv;
  kernels::ParallelFor(s.B * s.Hkv, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> row(s.T), acc(s.D);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / s.Hkv, g = task % s.Hkv;
      for (int64_t h = g * rep; h < (g + 1) * rep; ++h) {
        for (int64_t i = 0; i < s.T; ++i) {
          Scores(q, k, segment_ids, l, b, h, g, i, causal, scale, row);
          const double max = *std::max_element(row.begin(), row.end());
          double sum = 0;
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t j = 0; j < s.T; ++j) {
            if (row[j] == -std::numeric_limits<double>::infinity()) continue;
            const double p = std::exp(row[j] - max);
            sum += p;
            for (int64_t d = 0; d < s.D; ++d) acc[d] += p * double(v[l.K(b, j, g) + d]);
          }
          for (int64_t d = 0; d < s.D; ++d) out[l.Q(b, i, h) + d] = T(sum > 0 ? acc[d] / sum : 0.0);
          lse[l.L(b, h, i)] = T(sum > 0 ? max + std::log(sum) : -std::numeric_limits<double>::infinity());
        }
      }
    }
  });
}

template <typename T>
void DenseAttentionGrad(const T* q, const T* k, const T* v, const int32_t* segment_ids, kernels::AttentionShape s,
                        bool causal, double scale, const T* out, const T* lse, const T* dout, T* dq, T* dk, T* dv) {
  const Layout l{s};
  const int64_t rep = s.H / s.Hkv;
  kernels::ParallelFor(s.B * s.Hkv, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> row(s.T), dq_row(s.D), dk_acc(s.T * s.D), dv_acc(s.T * s.D);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / s.Hkv, g = task % s.Hkv;
      std::fill(dk_acc.begin(), dk_acc.end(), 0.0);
      std::fill(dv_acc.begin(), dv_acc.end(), 0.0);
      for (int64_t h = g * rep; h < (g + 1) * rep; ++h) {
        for (int64_t i = 0; i < s.T; ++i) {
          Scores(q, k, segment_ids, l, b, h, g, i, causal, scale, row);
          const T* do_i = dout + l.Q(b, i, h);
          const double delta = Dot(do_i, out + l.Q(b, i, h), s.D);  // rowsum(dO * O)
          const double row_lse = double(lse[l.L(b, h, i)]);
          std::fill(dq_row.begin(), dq_row.end(), 0.0);
          for (int64_t j = 0; j < s.T; ++j) {
            if (row[j] == -std::numeric_limits<double>::infinity()) continue;
            const double p = std::exp(row[j] - row_lse);
            const double ds = p * (Dot(do_i, v + l.K(b, j, g), s.D) - delta) * scale;
            const T* k_j = k + l.K(b, j, g);
            const T* q_i = q + l.Q(b, i, h);
            for (int64_t d = 0; d < s.D; ++d) {
              dq_row[d] += ds * double(k_j[d]);
              dk_acc[j * s.D + d] += ds * double(q_i[d]);
              dv_acc[j * s.D + d] += p * double(do_i[d]);
            }
          }
          for (int64_t d = 0; d < s.D; ++d) dq[l.Q(b, i, h) + d] = T(dq_row[d]);
        }
      }
      for (int64_t j = 0; j < s.T; ++j) {
        for (int64_t d = 0; d < s.D; ++d) {
          dk[l.K(b, j, g) + d] = T(dk_acc[j * s.D + d]);
          dv[l.K(b, j, g) + d] = T(dv_acc[j * s.D + d]);
        }
      }
    }
  });
}

#define GPT_SFT_INSTANTIATE(T)                                                                                    \
  template void DenseAttention<T>(const T*, const T*, const T*, const int32_t*, kernels::AttentionShape, bool,   \
                                  double, T*, T*);                                                                \
  template void DenseAttentionGrad<T>(const T*, const T*, const T*, const int32_t*, kernels::AttentionShape,      \
                                      bool, double, const T*, const T*, const T*, T*, T*, T*);
GPT_SFT_INSTANTIATE(float)
GPT_SFT_INSTANTIATE(double)
#undef GPT_SFT_INSTANTIATE

}  // namespace gpt_sft::runtime::interp
