// Implements the optimizer updates: elementwise parts in chunks on the pool (each element's
// arithmetic is independent of the thread count); Newton-Schulz uses matmul.h's Gemm.
#include "runtime/kernels/cpu/optimizers.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/newton_schulz_bf16.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/vec_math.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kChunk = 1 << 14;

}  // namespace

template <typename T>
void AdamWUpdate(T* p, T* m, T* v, const T* g, int64_t n, const AdamWHyper& h) {
  const double bias1 = 1 - std::pow(h.beta1, double(h.step)), bias2 = 1 - std::pow(h.beta2, double(h.step));
  const double step_size = h.lr / bias1, sqrt_bias2 = std::sqrt(bias2), decay = 1 - h.lr * h.weight_decay;
  ParallelFor(n, kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const double gi = g[i];
      const double mi = h.beta1 * m[i] + (1 - h.beta1) * gi;
      const double vi = h.beta2 * v[i] + (1 - h.beta2) * gi * gi;
      m[i] = T(mi);
      v[i] = T(vi);
      p[i] = T(double(p[i]) * decay - step_size * mi / (std::sqrt(vi) / sqrt_bias2 + h.eps));
    }
  });
}

template <typename T>
void NewtonSchulz5(const T* g, T* out, int64_t rows, int64_t cols, T* scratch) {
  constexpr double a = 3.4445, b = -4.7750, c = 2.0315;
  const bool tall = rows > cols;
  const int64_t r = tall ? cols : rows, n = tall ? rows : cols;  // X is [r, n], r <= n
  T* x = scratch;               // [r, n]
  T* x_next = x + r * n;        // [r, n]
  T* A = x_next + r * n;        // [r, r]
  T* Bm = A + r * r;            // [r, r]
  const double inv = 1.0 / (std::sqrt(SumOfSquares(g, rows * cols)) + 1e-7);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) (tall ? x[j * n + i] : x[i * n + j]) = T(g[i * cols + j] * inv);
  for (int it = 0; it < 5; ++it) {
    Gemm<T>(false, true, r, r, n, T(1), x, n, x, n, T(0), A, r);    // A = X X^T
    Gemm<T>(false, false, r, r, r, T(c), A, r, A, r, T(0), Bm, r);  // B = c A A
    for (int64_t i = 0; i < r * r; ++i) Bm[i] += T(b) * A[i];    //   + b A
    std::copy(x, x + r * n, x_next);
    Gemm<T>(false, false, r, n, r, T(1), Bm, r, x, n, T(a), x_next, n);  // X' = a X + B X
    std::swap(x, x_next);
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = tall ? x[j * n + i] : x[i * n + j];
}

template <typename T>
void MuonUpdate(T* p, T* buf, const T* g, int64_t rows, int64_t cols, const MuonHyper& h, T* scratch) {
  const int64_t n = rows * cols;
  T* nesterov = scratch;
  T* ortho = scratch + n;
  const double mu = h.momentum;
  ParallelFor(n, kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      buf[i] = T(mu * buf[i] + (1 - mu) * g[i]);
      nesterov[i] = T((1 - mu) * g[i] + mu * buf[i]);
    }
  });
  if constexpr (std::is_same_v<T, float>) {
    if (h.newton_schulz_bf16) {
      NewtonSchulz5Bf16(nesterov, ortho, rows, cols, ortho + n);
    } else {
      NewtonSchulz5(nesterov, ortho, rows, cols, ortho + n);
    }
  } else {
    if (h.newton_schulz_bf16) std::abort();  // bf16 autocast steps hold f32 tensors only
    NewtonSchulz5(nesterov, ortho, rows, cols, ortho + n);
  }
  const double scale = h.lr * std::sqrt(std::max(1.0, double(rows) / double(cols)));
  ParallelFor(n, kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) p[i] = T(p[i] - scale * ortho[i]);
  });
}

#define INSTANTIATE(T)                                                                    \
  template void AdamWUpdate<T>(T*, T*, T*, const T*, int64_t, const AdamWHyper&);         \
  template void NewtonSchulz5<T>(const T*, T*, int64_t, int64_t, T*);                     \
  template void MuonUpdate<T>(T*, T*, const T*, int64_t, int64_t, const MuonHyper&, T*);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

}  // namespace gpt_sft::runtime::kernels
