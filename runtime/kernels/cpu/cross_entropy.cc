// Implements CrossEntropy and its VJP with a max-shifted log-sum-exp per row.
#include "runtime/kernels/cpu/cross_entropy.h"

#include <algorithm>
#include <cmath>

namespace gpt_sft::runtime::kernels {
namespace {

template <typename T>
double LogSumExp(const T* row, int64_t V) {
  double m = row[0];
  for (int64_t v = 1; v < V; ++v) m = std::max(m, double(row[v]));
  double s = 0;
  for (int64_t v = 0; v < V; ++v) s += std::exp(double(row[v]) - m);
  return m + std::log(s);
}

}  // namespace

template <typename T>
CrossEntropyResult CrossEntropy(const T* logits, const int32_t* targets, int64_t N, int64_t V) {
  double sum = 0;
  int64_t count = 0;
  for (int64_t n = 0; n < N; ++n) {
    if (targets[n] < 0) continue;
    const T* row = logits + n * V;
    sum += LogSumExp(row, V) - double(row[targets[n]]);
    ++count;
  }
  return {count > 0 ? sum / count : 0.0, count};
}

template <typename T>
void CrossEntropyGrad(const T* logits, const int32_t* targets, int64_t N, int64_t V, double dloss, T* dlogits) {
  int64_t count = 0;
  for (int64_t n = 0; n < N; ++n) count += targets[n] >= 0;
  const double scale = count > 0 ? dloss / count : 0.0;
  for (int64_t n = 0; n < N; ++n) {
    T* out = dlogits + n * V;
    if (targets[n] < 0) {
      std::fill(out, out + V, T(0));
      continue;
    }
    const T* row = logits + n * V;
    const double lse = LogSumExp(row, V);
    for (int64_t v = 0; v < V; ++v) out[v] = T(scale * std::exp(double(row[v]) - lse));
    out[targets[n]] -= T(scale);
  }
}

template CrossEntropyResult CrossEntropy<float>(const float*, const int32_t*, int64_t, int64_t);
template CrossEntropyResult CrossEntropy<double>(const double*, const int32_t*, int64_t, int64_t);
template void CrossEntropyGrad<float>(const float*, const int32_t*, int64_t, int64_t, double, float*);
template void CrossEntropyGrad<double>(const double*, const int32_t*, int64_t, int64_t, double, double*);

}  // namespace gpt_sft::runtime::kernels
