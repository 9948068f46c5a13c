// Implements RmsNorm and its VJP, parallel over rows; sums accumulate in double for float
// inputs too, so the result does not depend on the row length's rounding.
#include "runtime/kernels/cpu/rms_norm.h"

#include <cmath>

#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/vec_math.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kRowsPerChunk = 64;

template <typename T>
double InvRms(const T* x, int64_t dim, T eps) {
  return 1.0 / std::sqrt(SumOfSquares(x, dim) / dim + double(eps));
}

}  // namespace

template <typename T>
void RmsNormRow(const T* x, T* y, int64_t dim, T eps) {
  const T inv = T(InvRms(x, dim, eps));
  for (int64_t i = 0; i < dim; ++i) y[i] = x[i] * inv;
}

template <typename T>
void RmsNormGradRow(const T* x, const T* dy, T* dx, int64_t dim, T eps) {
  const double inv = InvRms(x, dim, eps);
  const double mean_dy_y = Dot(dy, x, dim) * inv / dim;
  const T a = T(inv), b = T(inv * inv * mean_dy_y);
  for (int64_t i = 0; i < dim; ++i) dx[i] = a * dy[i] - b * x[i];
}

template <typename T>
void RmsNorm(const T* x, T* y, int64_t rows, int64_t dim, T eps) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) RmsNormRow(x + r * dim, y + r * dim, dim, eps);
  });
}

template <typename T>
void RmsNormGrad(const T* x, const T* dy, T* dx, int64_t rows, int64_t dim, T eps) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) RmsNormGradRow(x + r * dim, dy + r * dim, dx + r * dim, dim, eps);
  });
}

template void RmsNorm<float>(const float*, float*, int64_t, int64_t, float);
template void RmsNorm<double>(const double*, double*, int64_t, int64_t, double);
template void RmsNormGrad<float>(const float*, const float*, float*, int64_t, int64_t, float);
template void RmsNormGrad<double>(const double*, const double*, double*, int64_t, int64_t, double);
template void RmsNormRow<float>(const float*, float*, int64_t, float);
template void RmsNormRow<double>(const double*, double*, int64_t, double);
template void RmsNormGradRow<float>(const float*, const float*, float*, int64_t, float);
template void RmsNormGradRow<double>(const double*, const double*, double*, int64_t, double);

}  // namespace gpt_sft::runtime::kernels
