// Implements RmsNorm and its VJP; sums accumulate in double for float inputs too, so
// the result does not depend on the row length's rounding.
#include "runtime/kernels/cpu/rms_norm.h"

#include <cmath>

namespace gpt_sft::runtime::kernels {
namespace {

template <typename T>
double InvRms(const T* x, int64_t dim, T eps) {
  double ss = 0;
  for (int64_t i = 0; i < dim; ++i) ss += double(x[i]) * x[i];
  return 1.0 / std::sqrt(ss / dim + double(eps));
}

}  // namespace

template <typename T>
void RmsNorm(const T* x, T* y, int64_t rows, int64_t dim, T eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * dim;
    const T inv = T(InvRms(xr, dim, eps));
    for (int64_t i = 0; i < dim; ++i) y[r * dim + i] = xr[i] * inv;
  }
}

template <typename T>
void RmsNormGrad(const T* x, const T* dy, T* dx, int64_t rows, int64_t dim, T eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * dim;
    const T* dyr = dy + r * dim;
    const double inv = InvRms(xr, dim, eps);
    double dot = 0;  // mean(dy * y)
    for (int64_t i = 0; i < dim; ++i) dot += double(dyr[i]) * xr[i] * inv;
    dot /= dim;
    for (int64_t i = 0; i < dim; ++i) dx[r * dim + i] = T(inv * (dyr[i] - xr[i] * inv * dot));
  }
}

template void RmsNorm<float>(const float*, float*, int64_t, int64_t, float);
template void RmsNorm<double>(const double*, double*, int64_t, int64_t, double);
template void RmsNormGrad<float>(const float*, const float*, float*, int64_t, int64_t, float);
template void RmsNormGrad<double>(const double*, const double*, double*, int64_t, int64_t, double);

}  // namespace gpt_sft::runtime::kernels
