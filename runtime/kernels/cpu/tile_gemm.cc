// Implements TileGemm. The AVX2 kernel keeps a 6-row x 2-vector block of C in 12
// registers; for each k it loads two vectors of B's row k, broadcasts A[r, k] for the six
// rows and issues twelve FMAs. A is addressed as a[r * rs + p * cs], so A and A^T cost the
// same (a broadcast reads one element wherever it is). Column tails narrower than one vector, and CPUs without
// AVX2, take a plain i-k-j loop.
#include "runtime/kernels/cpu/tile_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <type_traits>

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int kRows = 6;  // rows of C per register block

// The vector operations, per element type, compiled for AVX2+FMA only.
struct F32x8 {
  using T = float;
  using V = __m256;
  static constexpr int kLanes = 8;
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline V Zero() { return _mm256_setzero_ps(); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline V Load(const T* p) { return _mm256_loadu_ps(p); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline void Store(T* p, V v) { _mm256_storeu_ps(p, v); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline V Splat(const T* p) { return _mm256_broadcast_ss(p); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
};
struct F64x4 {
  using T = double;
  using V = __m256d;
  static constexpr int kLanes = 4;
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline V Zero() { return _mm256_setzero_pd(); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline V Load(const T* p) { return _mm256_loadu_pd(p); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline void Store(T* p, V v) { _mm256_storeu_pd(p, v); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline V Splat(const T* p) { return _mm256_broadcast_sd(p); }
  [[gnu::target("avx2,fma"), gnu::always_inline]] static inline V Fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
};

// Strides of A: element (r, p) of the logical [m, k] operand is a[r * rs + p * cs].
struct AStride {
  int64_t rs, cs;
};

// C[R, NV*lanes] (+)= A[R, k] B[k, NV*lanes].
template <class S, int R, int NV>
[[gnu::target("avx2,fma")]] void Block(int64_t k, const typename S::T* a, AStride as, const typename S::T* b,
                                       int64_t ldb, typename S::T* c, int64_t ldc, bool accumulate) {
  typename S::V acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = accumulate ? S::Load(c + r * ldc + v * S::kLanes) : S::Zero();
  for (int64_t p = 0; p < k; ++p) {
    typename S::V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = S::Load(b + p * ldb + v * S::kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const typename S::V av = S::Splat(a + r * as.rs + p * as.cs);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = S::Fma(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) S::Store(c + r * ldc + v * S::kLanes, acc[r][v]);
}

template <class S, int NV>
void BlockRows(int rows, int64_t k, const typename S::T* a, AStride lda, const typename S::T* b, int64_t ldb,
               typename S::T* c, int64_t ldc, bool accumulate) {
  switch (rows) {
    case 6: return Block<S, 6, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    case 5: return Block<S, 5, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    case 4: return Block<S, 4, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    case 3: return Block<S, 3, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    case 2: return Block<S, 2, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    default: return Block<S, 1, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
  }
}

// Columns [j0, n) of C by the portable loop.
template <typename T>
void Portable(int64_t m, int64_t j0, int64_t n, int64_t k, const T* a, AStride as, const T* b, int64_t ldb, T* c,
              int64_t ldc, bool accumulate) {
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    if (!accumulate) std::fill(ci + j0, ci + n, T(0));
    for (int64_t p = 0; p < k; ++p) {
      const T aip = a[i * as.rs + p * as.cs];
      const T* bp = b + p * ldb;
      for (int64_t j = j0; j < n; ++j) ci[j] += aip * bp[j];
    }
  }
}

template <class S>
void Avx2(int64_t m, int64_t n, int64_t k, const typename S::T* a, AStride as, const typename S::T* b, int64_t ldb,
          typename S::T* c, int64_t ldc, bool accumulate) {
  constexpr int64_t L = S::kLanes;
  int64_t j = 0;
  for (; j + 2 * L <= n; j += 2 * L)
    for (int64_t i = 0; i < m; i += kRows)
      BlockRows<S, 2>(int(std::min<int64_t>(kRows, m - i)), k, a + i * as.rs, as, b + j, ldb, c + i * ldc + j, ldc,
                      accumulate);
  if (j + L <= n) {
    for (int64_t i = 0; i < m; i += kRows)
      BlockRows<S, 1>(int(std::min<int64_t>(kRows, m - i)), k, a + i * as.rs, as, b + j, ldb, c + i * ldc + j, ldc,
                      accumulate);
    j += L;
  }
  if (j < n) Portable(m, j, n, k, a, as, b, ldb, c, ldc, accumulate);
}

bool DetectAvx2() {
  __builtin_cpu_init();  // needed when this runs from a static initializer
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
const bool kHasAvx2 = DetectAvx2();

template <typename T>
void Gemm(int64_t m, int64_t n, int64_t k, const T* a, AStride as, const T* b, int64_t ldb, T* c, int64_t ldc,
          bool accumulate) {
  using S = std::conditional_t<std::is_same_v<T, float>, F32x8, F64x4>;
  if (kHasAvx2) return Avx2<S>(m, n, k, a, as, b, ldb, c, ldc, accumulate);
  Portable(m, 0, n, k, a, as, b, ldb, c, ldc, accumulate);
}

}  // namespace

bool TileGemmUsesAvx2() { return kHasAvx2; }

template <typename T>
void TileGemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc,
              bool accumulate) {
  Gemm(m, n, k, a, AStride{lda, 1}, b, ldb, c, ldc, accumulate);
}

template <typename T>
void TileGemmTransposedA(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                         int64_t ldc, bool accumulate) {
  Gemm(m, n, k, a, AStride{1, lda}, b, ldb, c, ldc, accumulate);
}

template <typename T>
void TransposeTile(int64_t rows, int64_t cols, const T* in, int64_t ld_in, T* out, int64_t ld_out) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[j * ld_out + i] = in[i * ld_in + j];
}

#define INSTANTIATE(T)                                                                                     \
  template void TileGemm<T>(int64_t, int64_t, int64_t, const T*, int64_t, const T*, int64_t, T*, int64_t, bool); \
  template void TileGemmTransposedA<T>(int64_t, int64_t, int64_t, const T*, int64_t, const T*, int64_t, T*,      \
                                       int64_t, bool);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

template void TransposeTile<float>(int64_t, int64_t, const float*, int64_t, float*, int64_t);
template void TransposeTile<double>(int64_t, int64_t, const double*, int64_t, double*, int64_t);

}  // namespace gpt_sft::runtime::kernels
