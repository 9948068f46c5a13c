// Implements TileGemm. A vector kernel keeps an R-row x NV-vector block of C in registers;
// for each k it loads NV vectors of B's row k, broadcasts A[r, k] for the R rows and issues
// R * NV fused multiply-adds. A is addressed as a[r * rs + p * cs], so A and A^T cost the
// same (a broadcast reads one element wherever it is).
//
// Two vector kernels, chosen at run time: AVX-512 (16 floats / 8 doubles a vector, blocks
// of up to 14 rows x 2 vectors: 28 of the 32 zmm registers hold C, two hold B, one the
// broadcast), and AVX2+FMA (8 floats / 4 doubles, 6 x 2 blocks in 12 of 16 ymm registers).
// They give identical bits (tile_gemm_isa.h): both run one FMA chain per C element, and the
// AVX-512 kernel covers exactly the columns the AVX2 one does (n rounded down to whole
// AVX2 vectors; its last vector is masked when that is not a whole AVX-512 vector). The
// remaining n % 8 (float) or n % 4 (double) columns, and CPUs without AVX2, take a plain
// i-k-j loop.
#include "runtime/kernels/cpu/tile_gemm.h"

#include <algorithm>
#include <type_traits>

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/tile_gemm_isa.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

// Strides of A: element (r, p) of the logical [m, k] operand is a[r * rs + p * cs].
struct AStride {
  int64_t rs, cs;
};

// Columns [j0, n) of C by the portable loop (multiply, then add).
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

// The columns both vector kernels cover: n rounded down to whole AVX2 vectors.
template <typename T>
int64_t VectorColumns(int64_t n) {
  constexpr int64_t kAvx2Lanes = 32 / sizeof(T);
  return n / kAvx2Lanes * kAvx2Lanes;
}

//===-- AVX2 + FMA -----------------------------------------------------------------------===//

constexpr int kAvx2Rows = 6;  // rows of C per register block

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

// C[R, NV*lanes] (+)= A[R, k] B[k, NV*lanes].
template <class S, int R, int NV>
[[gnu::target("avx2,fma")]] void Avx2Block(int64_t k, const typename S::T* a, AStride as, const typename S::T* b,
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
void Avx2BlockRows(int rows, int64_t k, const typename S::T* a, AStride lda, const typename S::T* b, int64_t ldb,
                   typename S::T* c, int64_t ldc, bool accumulate) {
  switch (rows) {
    case 6: return Avx2Block<S, 6, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    case 5: return Avx2Block<S, 5, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    case 4: return Avx2Block<S, 4, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    case 3: return Avx2Block<S, 3, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    case 2: return Avx2Block<S, 2, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    default: return Avx2Block<S, 1, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
  }
}

template <class S>
void Avx2(int64_t m, int64_t n, int64_t k, const typename S::T* a, AStride as, const typename S::T* b, int64_t ldb,
          typename S::T* c, int64_t ldc, bool accumulate) {
  constexpr int64_t L = S::kLanes;
  int64_t j = 0;
  for (; j + 2 * L <= n; j += 2 * L)
    for (int64_t i = 0; i < m; i += kAvx2Rows)
      Avx2BlockRows<S, 2>(int(std::min<int64_t>(kAvx2Rows, m - i)), k, a + i * as.rs, as, b + j, ldb,
                          c + i * ldc + j, ldc, accumulate);
  if (j + L <= n) {
    for (int64_t i = 0; i < m; i += kAvx2Rows)
      Avx2BlockRows<S, 1>(int(std::min<int64_t>(kAvx2Rows, m - i)), k, a + i * as.rs, as, b + j, ldb,
                          c + i * ldc + j, ldc, accumulate);
    j += L;
  }
  if (j < n) Portable(m, j, n, k, a, as, b, ldb, c, ldc, accumulate);
}

//===-- AVX-512 --------------------------------------------------------------------------===//

constexpr int kAvx512Rows = 14;   // rows of C per register block
constexpr int kAvx512Vectors = 2;  // vectors of C per row of a block

// The last vector of each row of a block is loaded and stored under a lane mask, so one
// block shape serves whole panels (all lanes) and the final, narrower one.
struct F32x16 {
  using T = float;
  using V = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  [[gnu::target("avx512f"), gnu::always_inline]] static inline V Zero() { return _mm512_setzero_ps(); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline V Load(const T* p) { return _mm512_loadu_ps(p); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline V Load(Mask m, const T* p) {
    return _mm512_maskz_loadu_ps(m, p);
  }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline void Store(T* p, V v) { _mm512_storeu_ps(p, v); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline void Store(Mask m, T* p, V v) {
    _mm512_mask_storeu_ps(p, m, v);
  }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline V Splat(const T* p) { return _mm512_set1_ps(*p); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
};
struct F64x8 {
  using T = double;
  using V = __m512d;
  using Mask = __mmask8;
  static constexpr int kLanes = 8;
  [[gnu::target("avx512f"), gnu::always_inline]] static inline V Zero() { return _mm512_setzero_pd(); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline V Load(const T* p) { return _mm512_loadu_pd(p); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline V Load(Mask m, const T* p) {
    return _mm512_maskz_loadu_pd(m, p);
  }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline void Store(T* p, V v) { _mm512_storeu_pd(p, v); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline void Store(Mask m, T* p, V v) {
    _mm512_mask_storeu_pd(p, m, v);
  }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline V Splat(const T* p) { return _mm512_set1_pd(*p); }
  [[gnu::target("avx512f"), gnu::always_inline]] static inline V Fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
};

// C[R, NV*lanes] (+)= A[R, k] B[k, NV*lanes], the last vector of each row under `last`.
template <class S, int R, int NV>
[[gnu::target("avx512f")]] void Avx512Block(int64_t k, const typename S::T* a, AStride as, const typename S::T* b,
                                            int64_t ldb, typename S::T* c, int64_t ldc, bool accumulate,
                                            typename S::Mask last) {
  using V = typename S::V;
  constexpr int L = S::kLanes;
  V acc[R][NV];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; ++v) acc[r][v] = accumulate ? S::Load(c + r * ldc + v * L) : S::Zero();
    acc[r][NV - 1] = accumulate ? S::Load(last, c + r * ldc + (NV - 1) * L) : S::Zero();
  }
  for (int64_t p = 0; p < k; ++p) {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; ++v) bv[v] = S::Load(b + p * ldb + v * L);
    bv[NV - 1] = S::Load(last, b + p * ldb + (NV - 1) * L);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const V av = S::Splat(a + r * as.rs + p * as.cs);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = S::Fma(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; ++v) S::Store(c + r * ldc + v * L, acc[r][v]);
    S::Store(last, c + r * ldc + (NV - 1) * L, acc[r][NV - 1]);
  }
}

// Avx512Block with R = rows (1 <= rows <= kR) chosen at run time.
template <class S, int NV, int kR = kAvx512Rows>
void Avx512BlockRows(int rows, int64_t k, const typename S::T* a, AStride as, const typename S::T* b, int64_t ldb,
                     typename S::T* c, int64_t ldc, bool accumulate, typename S::Mask last) {
  if constexpr (kR > 1) {
    if (rows < kR) return Avx512BlockRows<S, NV, kR - 1>(rows, k, a, as, b, ldb, c, ldc, accumulate, last);
  }
  Avx512Block<S, kR, NV>(k, a, as, b, ldb, c, ldc, accumulate, last);
}

// Columns [j, j + NV*lanes) of C (the last vector under `last`), all rows.
template <class S, int NV>
void Avx512Panel(int64_t m, int64_t k, const typename S::T* a, AStride as, const typename S::T* b, int64_t ldb,
                 typename S::T* c, int64_t ldc, bool accumulate, typename S::Mask last) {
  for (int64_t i = 0; i < m; i += kAvx512Rows)
    Avx512BlockRows<S, NV>(int(std::min<int64_t>(kAvx512Rows, m - i)), k, a + i * as.rs, as, b, ldb, c + i * ldc,
                           ldc, accumulate, last);
}

template <class S>
void Avx512(int64_t m, int64_t n, int64_t k, const typename S::T* a, AStride as, const typename S::T* b, int64_t ldb,
            typename S::T* c, int64_t ldc, bool accumulate) {
  using Mask = typename S::Mask;
  constexpr int64_t L = S::kLanes, kPanel = kAvx512Vectors * L;
  const Mask all = Mask(~Mask(0));
  const int64_t nv = VectorColumns<typename S::T>(n);
  int64_t j = 0;
  for (; j + kPanel <= nv; j += kPanel)
    Avx512Panel<S, kAvx512Vectors>(m, k, a, as, b + j, ldb, c + j, ldc, accumulate, all);
  // Fewer than kPanel columns left: two vectors or one, the last masked when not whole.
  static_assert(kAvx512Vectors == 2, "the narrower panels below are two vectors and one");
  const auto lanes = [](int64_t count) { return Mask((1u << count) - 1); };
  if (nv - j > L) {
    Avx512Panel<S, 2>(m, k, a, as, b + j, ldb, c + j, ldc, accumulate, lanes(nv - j - L));
  } else if (j < nv) {
    Avx512Panel<S, 1>(m, k, a, as, b + j, ldb, c + j, ldc, accumulate, lanes(nv - j));
  }
  if (nv < n) Portable(m, nv, n, k, a, as, b, ldb, c, ldc, accumulate);
}

//===-- dispatch -------------------------------------------------------------------------===//

TileGemmIsa DetectIsa() {
  if (CpuIsaAtLeast(CpuIsa::kAvx512)) return TileGemmIsa::kAvx512;
  if (CpuIsaAtLeast(CpuIsa::kAvx2)) return TileGemmIsa::kAvx2;
  return TileGemmIsa::kPortable;
}
const TileGemmIsa kIsa = DetectIsa();

template <typename T>
void Gemm(TileGemmIsa isa, int64_t m, int64_t n, int64_t k, const T* a, AStride as, const T* b, int64_t ldb, T* c,
          int64_t ldc, bool accumulate) {
  constexpr bool kFloat = std::is_same_v<T, float>;
  switch (isa) {
    case TileGemmIsa::kAvx512:
      return Avx512<std::conditional_t<kFloat, F32x16, F64x8>>(m, n, k, a, as, b, ldb, c, ldc, accumulate);
    case TileGemmIsa::kAvx2:
      return Avx2<std::conditional_t<kFloat, F32x8, F64x4>>(m, n, k, a, as, b, ldb, c, ldc, accumulate);
    case TileGemmIsa::kPortable:
      return Portable(m, 0, n, k, a, as, b, ldb, c, ldc, accumulate);
  }
}

// out[c, r] = in[r, c] for an 8x8 float block: pairs of rows interleaved, then pairs of
// pairs, then the 128-bit halves swapped.
[[gnu::target("avx2")]] void Transpose8x8(const float* in, int64_t ld_in, float* out, int64_t ld_out) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(in + i * ld_in);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(out + i * ld_out, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(out + (i + 4) * ld_out, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

}  // namespace

bool TileGemmIsaSupported(TileGemmIsa isa) { return isa <= kIsa; }

TileGemmIsa TileGemmDefaultIsa() { return kIsa; }

const char* TileGemmKernelName() {
  switch (kIsa) {
    case TileGemmIsa::kAvx512: return "AVX-512";
    case TileGemmIsa::kAvx2: return "AVX2+FMA";
    case TileGemmIsa::kPortable: return "portable";
  }
  return "portable";
}

template <typename T>
void TileGemmWithIsa(TileGemmIsa isa, bool transposed_a, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                     const T* b, int64_t ldb, T* c, int64_t ldc, bool accumulate) {
  Gemm(isa, m, n, k, a, transposed_a ? AStride{1, lda} : AStride{lda, 1}, b, ldb, c, ldc, accumulate);
}

template <typename T>
void TileGemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc,
              bool accumulate) {
  Gemm(kIsa, m, n, k, a, AStride{lda, 1}, b, ldb, c, ldc, accumulate);
}

template <typename T>
void TileGemmTransposedA(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                         int64_t ldc, bool accumulate) {
  Gemm(kIsa, m, n, k, a, AStride{1, lda}, b, ldb, c, ldc, accumulate);
}

template <typename T>
void TransposeTile(int64_t rows, int64_t cols, const T* in, int64_t ld_in, T* out, int64_t ld_out) {
  int64_t i0 = 0, j0 = 0;
  if constexpr (std::is_same_v<T, float>) {
    if (kIsa != TileGemmIsa::kPortable) {  // whole 8x8 blocks in registers, the edges below
      i0 = rows / 8 * 8;
      j0 = cols / 8 * 8;
      for (int64_t i = 0; i < i0; i += 8)
        for (int64_t j = 0; j < j0; j += 8) Transpose8x8(in + i * ld_in + j, ld_in, out + j * ld_out + i, ld_out);
    }
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = i < i0 ? j0 : 0; j < cols; ++j) out[j * ld_out + i] = in[i * ld_in + j];
}

#define INSTANTIATE(T)                                                                                       \
  template void TileGemm<T>(int64_t, int64_t, int64_t, const T*, int64_t, const T*, int64_t, T*, int64_t, bool); \
  template void TileGemmTransposedA<T>(int64_t, int64_t, int64_t, const T*, int64_t, const T*, int64_t, T*,      \
                                       int64_t, bool);                                                          \
  template void TileGemmWithIsa<T>(TileGemmIsa, bool, int64_t, int64_t, int64_t, const T*, int64_t, const T*,    \
                                   int64_t, T*, int64_t, bool);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

template void TransposeTile<float>(int64_t, int64_t, const float*, int64_t, float*, int64_t);
template void TransposeTile<double>(int64_t, int64_t, const double*, int64_t, double*, int64_t);

}  // namespace gpt_sft::runtime::kernels
