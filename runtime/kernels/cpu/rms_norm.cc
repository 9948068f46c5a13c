// Implements RmsNorm and its VJP, parallel over rows; sums accumulate in double for float
// inputs too, so the result does not depend on the row length's rounding.
#include "runtime/kernels/cpu/rms_norm.h"

#include <algorithm>
#include <cmath>

#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/vec_math.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kRowsPerChunk = 64;
constexpr int64_t kRowsPerBatch = 16;

double InvRmsOfSum(double sum_of_squares, int64_t dim, double eps) {
  return 1.0 / std::sqrt(sum_of_squares / dim + eps);
}

// A row's arithmetic once its sums are known, shared by the row kernels (SumOfSquares, Dot)
// and the batched ones (RowSums: the same sums), so both give the same bits. Element i reads
// only x[i] (and dy[i]) before writing its output: y (dx) may be x's (dy's) row.
template <typename T>
void NormalizedRow(const T* x, double inv_rms, T* y, int64_t dim) {
  const T inv = T(inv_rms);
  for (int64_t i = 0; i < dim; ++i) y[i] = x[i] * inv;
}

template <typename T>
void NormGradOfRow(const T* x, const T* dy, double inv_rms, double dot_dy_x, T* dx, int64_t dim) {
  const double mean_dy_y = dot_dy_x * inv_rms / dim;
  const T a = T(inv_rms), b = T(inv_rms * inv_rms * mean_dy_y);
  for (int64_t i = 0; i < dim; ++i) dx[i] = a * dy[i] - b * x[i];
}

}  // namespace

template <typename T>
void RmsNormRow(const T* x, T* y, int64_t dim, T eps) {
  NormalizedRow(x, InvRmsOfSum(SumOfSquares(x, dim), dim, double(eps)), y, dim);
}

template <typename T>
void RmsNormGradRow(const T* x, const T* dy, T* dx, int64_t dim, T eps) {
  NormGradOfRow(x, dy, InvRmsOfSum(SumOfSquares(x, dim), dim, double(eps)), Dot(dy, x, dim), dx, dim);
}

template <typename T>
void RmsNormRows(const T* x, T* y, int64_t rows, int64_t dim, T eps) {
  double sums[kRowsPerBatch];
  for (int64_t r0 = 0; r0 < rows; r0 += kRowsPerBatch) {
    const int64_t n = std::min(kRowsPerBatch, rows - r0);
    RowSums<T>(x + r0 * dim, nullptr, dim, n, dim, sums, nullptr);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t o = (r0 + r) * dim;
      NormalizedRow(x + o, InvRmsOfSum(sums[r], dim, double(eps)), y + o, dim);
    }
  }
}

template <typename T>
void RmsNormGradRows(const T* x, const T* dy, T* dx, int64_t rows, int64_t dim, T eps) {
  double sums[kRowsPerBatch], dots[kRowsPerBatch];
  for (int64_t r0 = 0; r0 < rows; r0 += kRowsPerBatch) {
    const int64_t n = std::min(kRowsPerBatch, rows - r0);
    RowSums<T>(x + r0 * dim, dy + r0 * dim, dim, n, dim, sums, dots);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t o = (r0 + r) * dim;
      NormGradOfRow(x + o, dy + o, InvRmsOfSum(sums[r], dim, double(eps)), dots[r], dx + o, dim);
    }
  }
}

template <typename T>
void RmsNorm(const T* x, T* y, int64_t rows, int64_t dim, T eps) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    RmsNormRows(x + begin * dim, y + begin * dim, end - begin, dim, eps);
  });
}

template <typename T>
void RmsNormGrad(const T* x, const T* dy, T* dx, int64_t rows, int64_t dim, T eps) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    RmsNormGradRows(x + begin * dim, dy + begin * dim, dx + begin * dim, end - begin, dim, eps);
  });
}

template void RmsNorm<float>(const float*, float*, int64_t, int64_t, float);
template void RmsNorm<double>(const double*, double*, int64_t, int64_t, double);
template void RmsNormGrad<float>(const float*, const float*, float*, int64_t, int64_t, float);
template void RmsNormGrad<double>(const double*, const double*, double*, int64_t, int64_t, double);
template void RmsNormRows<float>(const float*, float*, int64_t, int64_t, float);
template void RmsNormRows<double>(const double*, double*, int64_t, int64_t, double);
template void RmsNormGradRows<float>(const float*, const float*, float*, int64_t, int64_t, float);
template void RmsNormGradRows<double>(const double*, const double*, double*, int64_t, int64_t, double);
template void RmsNormRow<float>(const float*, float*, int64_t, float);
template void RmsNormRow<double>(const double*, double*, int64_t, double);
template void RmsNormGradRow<float>(const float*, const float*, float*, int64_t, float);
template void RmsNormGradRow<double>(const double*, const double*, double*, int64_t, double);

}  // namespace gpt_sft::runtime::kernels
