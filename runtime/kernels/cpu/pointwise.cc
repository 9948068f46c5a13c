// Implements the pointwise kernels (plain loops the compiler vectorises).
#include "runtime/kernels/cpu/pointwise.h"

#include <cmath>

namespace gpt_sft::runtime::kernels {

template <typename T>
void ReluSquare(const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T r = x[i] > T(0) ? x[i] : T(0);
    y[i] = r * r;
  }
}

template <typename T>
void ReluSquareGrad(const T* x, const T* dy, T* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > T(0) ? dy[i] * T(2) * x[i] : T(0);
}

template <typename T>
void Softcap(const T* x, T* y, int64_t n, T cap) {
  for (int64_t i = 0; i < n; ++i) y[i] = cap * std::tanh(x[i] / cap);
}

template <typename T>
void SoftcapGrad(const T* y, const T* dy, T* dx, int64_t n, T cap) {
  for (int64_t i = 0; i < n; ++i) {
    const T t = y[i] / cap;
    dx[i] = dy[i] * (T(1) - t * t);
  }
}

#define INSTANTIATE(T)                                               \
  template void ReluSquare<T>(const T*, T*, int64_t);                \
  template void ReluSquareGrad<T>(const T*, const T*, T*, int64_t);  \
  template void Softcap<T>(const T*, T*, int64_t, T);                \
  template void SoftcapGrad<T>(const T*, const T*, T*, int64_t, T);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

}  // namespace gpt_sft::runtime::kernels
