// Implements CachedAttention: per (b, h, i) with j_max = Tk - Tq + i,
//   s_j = scale * q_i . k_j (j <= j_max), p = softmax(s), out_i = sum_j p_j v_j,
// in double, rounded once to T.
#include "runtime/kernels/cpu/cached_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {

template <typename T>
void CachedAttention(const T* q, const T* k, const T* v, CachedAttentionShape s, double scale, T* out) {
  const int64_t rep = s.H / s.Hkv, offset = s.Tk - s.Tq;
  ParallelFor(s.B * s.Tq * s.H, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> scores(s.Tk), acc(s.D);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t h = task % s.H, i = (task / s.H) % s.Tq, b = task / (s.H * s.Tq), g = h / rep;
      const T* qi = q + ((b * s.Tq + i) * s.H + h) * s.D;
      const int64_t visible = offset + i + 1;
      double max_score = -INFINITY;
      for (int64_t j = 0; j < visible; ++j) {
        const T* kj = k + ((b * s.Tk + j) * s.Hkv + g) * s.D;
        double dot = 0;
        for (int64_t d = 0; d < s.D; ++d) dot += double(qi[d]) * double(kj[d]);
        scores[j] = dot * scale;
        max_score = std::max(max_score, scores[j]);
      }
      double total = 0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < visible; ++j) {
        const double p = std::exp(scores[j] - max_score);
        total += p;
        const T* vj = v + ((b * s.Tk + j) * s.Hkv + g) * s.D;
        for (int64_t d = 0; d < s.D; ++d) acc[d] += p * double(vj[d]);
      }
      T* oi = out + ((b * s.Tq + i) * s.H + h) * s.D;
      for (int64_t d = 0; d < s.D; ++d) oi[d] = T(acc[d] / total);
    }
  });
}

template void CachedAttention<float>(const float*, const float*, const float*, CachedAttentionShape, double, float*);
template void CachedAttention<double>(const double*, const double*, const double*, CachedAttentionShape, double,
                                      double*);

}  // namespace gpt_sft::runtime::kernels
