// Implements AddRmsNorm and RmsNormGradAdd, parallel over rows like RmsNorm.
#include "runtime/kernels/cpu/residual_rms_norm.h"

#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/rms_norm.h"

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

template void AddRmsNorm<float>(const float*, const float*, float*, float*, int64_t, int64_t, float);
template void AddRmsNorm<double>(const double*, const double*, double*, double*, int64_t, int64_t, double);
template void RmsNormGradAdd<float>(const float*, const float*, const float*, float*, int64_t, int64_t, float);
template void RmsNormGradAdd<double>(const double*, const double*, const double*, double*, int64_t, int64_t, double);

}  // namespace gpt_sft::runtime::kernels
