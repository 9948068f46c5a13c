// Implements the optimizer updates: elementwise parts in chunks on the pool (each element's
// arithmetic is independent of the thread count), 8 lanes at a time on AVX-512 for float;
// Newton-Schulz uses matmul.h's Gemm.
#include "runtime/kernels/cpu/optimizers.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/newton_schulz_bf16.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/vec_math.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kChunk = 1 << 14;

// The elementwise updates compute in double whatever T is; for float, AVX-512 CPUs run them 8
// lanes at a time with the same IEEE double operations in the same order (the file is built
// with -ffp-contract=off, so neither form fuses a multiply-add), hence the same bits. Each
// *Avx512 function returns how many elements it did; the scalar loop finishes the rest.

struct AdamWConstants {
  double beta1, beta2, step_size, sqrt_bias2, decay, eps;
};

template <typename T>
void AdamWRange(T* p, T* m, T* v, const T* g, int64_t begin, int64_t end, const AdamWConstants& k) {
  for (int64_t i = begin; i < end; ++i) {
    const double gi = g[i];
    const double mi = k.beta1 * m[i] + (1 - k.beta1) * gi;
    const double vi = k.beta2 * v[i] + (1 - k.beta2) * gi * gi;
    m[i] = T(mi);
    v[i] = T(vi);
    p[i] = T(double(p[i]) * k.decay - k.step_size * mi / (std::sqrt(vi) / k.sqrt_bias2 + k.eps));
  }
}

[[gnu::target("avx512f")]] inline __m512d Load8(const float* x) { return _mm512_cvtps_pd(_mm256_loadu_ps(x)); }
[[gnu::target("avx512f")]] inline void Store8(float* x, __m512d v) { _mm256_storeu_ps(x, _mm512_cvtpd_ps(v)); }

[[gnu::target("avx512f")]] int64_t AdamWAvx512(float* p, float* m, float* v, const float* g, int64_t begin,
                                               int64_t end, const AdamWConstants& k) {
  const __m512d b1 = _mm512_set1_pd(k.beta1), c1 = _mm512_set1_pd(1 - k.beta1);
  const __m512d b2 = _mm512_set1_pd(k.beta2), c2 = _mm512_set1_pd(1 - k.beta2);
  const __m512d step = _mm512_set1_pd(k.step_size), sb2 = _mm512_set1_pd(k.sqrt_bias2);
  const __m512d decay = _mm512_set1_pd(k.decay), eps = _mm512_set1_pd(k.eps);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m512d gi = Load8(g + i);
    const __m512d mi = _mm512_add_pd(_mm512_mul_pd(b1, Load8(m + i)), _mm512_mul_pd(c1, gi));
    const __m512d vi = _mm512_add_pd(_mm512_mul_pd(b2, Load8(v + i)), _mm512_mul_pd(_mm512_mul_pd(c2, gi), gi));
    Store8(m + i, mi);
    Store8(v + i, vi);
    const __m512d denom = _mm512_add_pd(_mm512_div_pd(_mm512_sqrt_pd(vi), sb2), eps);
    Store8(p + i, _mm512_sub_pd(_mm512_mul_pd(Load8(p + i), decay), _mm512_div_pd(_mm512_mul_pd(step, mi), denom)));
  }
  return i;
}

/// Muon's momentum: buf = mu buf + (1 - mu) g, then the Nesterov gradient (1 - mu) g + mu buf.
template <typename T>
void MomentumRange(T* buf, T* nesterov, const T* g, int64_t begin, int64_t end, double mu) {
  for (int64_t i = begin; i < end; ++i) {
    buf[i] = T(mu * buf[i] + (1 - mu) * g[i]);
    nesterov[i] = T((1 - mu) * g[i] + mu * buf[i]);
  }
}

[[gnu::target("avx512f")]] int64_t MomentumAvx512(float* buf, float* nesterov, const float* g, int64_t begin,
                                                  int64_t end, double mu) {
  const __m512d vmu = _mm512_set1_pd(mu), rest = _mm512_set1_pd(1 - mu);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m512d gi = Load8(g + i);
    Store8(buf + i, _mm512_add_pd(_mm512_mul_pd(vmu, Load8(buf + i)), _mm512_mul_pd(rest, gi)));
    Store8(nesterov + i, _mm512_add_pd(_mm512_mul_pd(rest, gi), _mm512_mul_pd(vmu, Load8(buf + i))));
  }
  return i;
}

/// p -= scale * step.
template <typename T>
void StepRange(T* p, const T* step, int64_t begin, int64_t end, double scale) {
  for (int64_t i = begin; i < end; ++i) p[i] = T(p[i] - scale * step[i]);
}

[[gnu::target("avx512f")]] int64_t StepAvx512(float* p, const float* step, int64_t begin, int64_t end,
                                              double scale) {
  const __m512d s = _mm512_set1_pd(scale);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) Store8(p + i, _mm512_sub_pd(Load8(p + i), _mm512_mul_pd(s, Load8(step + i))));
  return i;
}

bool HasAvx512() {
  static const bool has = CpuIsaAtLeast(CpuIsa::kAvx512);
  return has;
}

}  // namespace

template <typename T>
void AdamWUpdate(T* p, T* m, T* v, const T* g, int64_t n, const AdamWHyper& h) {
  const double bias1 = 1 - std::pow(h.beta1, double(h.step)), bias2 = 1 - std::pow(h.beta2, double(h.step));
  const AdamWConstants k{h.beta1, h.beta2, h.lr / bias1, std::sqrt(bias2), 1 - h.lr * h.weight_decay, h.eps};
  ParallelFor(n, kChunk, [&](int64_t begin, int64_t end) {
    if constexpr (std::is_same_v<T, float>) {
      if (HasAvx512()) begin = AdamWAvx512(p, m, v, g, begin, end, k);
    }
    AdamWRange(p, m, v, g, begin, end, k);
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
    if constexpr (std::is_same_v<T, float>) {
      if (HasAvx512()) begin = MomentumAvx512(buf, nesterov, g, begin, end, mu);
    }
    MomentumRange(buf, nesterov, g, begin, end, mu);
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
    if constexpr (std::is_same_v<T, float>) {
      if (HasAvx512()) begin = StepAvx512(p, ortho, begin, end, scale);
    }
    StepRange(p, ortho, begin, end, scale);
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
