// Implements AddRmsNorm and RmsNormGradAdd, parallel over rows like RmsNorm.
#include "runtime/kernels/cpu/residual_rms_norm.h"

#include <algorithm>

#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kRowsPerChunk = 64;

}  // namespace

template <typename T>
void AddRmsNorm(const T* a, const T* b, T* sum, T* y, int64_t rows, int64_t dim, T eps) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r * dim;
      for (int64_t i = 0; i < dim; ++i) sum[o + i] = a[o + i] + b[o + i];
    }
    RmsNormRows(sum + begin * dim, y + begin * dim, end - begin, dim, eps);
  });
}

template <typename T>
void RmsNormGradAdd(const T* x, const T* dy, const T* r, T* out, int64_t rows, int64_t dim, T eps) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    T grad[kMaxResidualRmsNormDim];  // the norm's gradient row: out may be r's bytes
    for (int64_t row = begin; row < end; ++row) {
      const int64_t o = row * dim;
      RmsNormGradRow(x + o, dy + o, grad, dim, eps);
      for (int64_t i = 0; i < dim; ++i) out[o + i] = r[o + i] + grad[i];
    }
  });
}

void RmsNormGradAddRoundBf16(const float* x, const float* dy, const float* r, float* out, int64_t rows, int64_t dim,
                             float eps) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    // The norm's gradient of as many rows as fit, then their sums: out may be r's bytes.
    float grad[kMaxResidualRmsNormDim];
    const int64_t group = std::max<int64_t>(1, kMaxResidualRmsNormDim / dim);
    for (int64_t row = begin; row < end; row += group) {
      const int64_t o = row * dim, n = std::min(group, end - row) * dim;
      RmsNormGradRows(x + o, dy + o, grad, n / dim, dim, eps);
      for (int64_t i = 0; i < n; ++i) grad[i] = r[o + i] + grad[i];
      RoundBf16(grad, out + o, n);
    }
  });
}

template void AddRmsNorm<float>(const float*, const float*, float*, float*, int64_t, int64_t, float);
template void AddRmsNorm<double>(const double*, const double*, double*, double*, int64_t, int64_t, double);
template void RmsNormGradAdd<float>(const float*, const float*, const float*, float*, int64_t, int64_t, float);
template void RmsNormGradAdd<double>(const double*, const double*, const double*, double*, int64_t, int64_t, double);

}  // namespace gpt_sft::runtime::kernels
