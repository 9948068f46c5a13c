// Implements the matmul + relu² fusion on the GEMMs' own row blocks (MatmulThen,
// MatmulBf16InputsRoundedOutputThen) with ReluSquareRange as their epilogue, and the relu²
// backward as the epilogue of the product that makes its cotangent.
#include "runtime/kernels/cpu/matmul_relu_square.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/round_bf16_avx512.h"
#include "runtime/kernels/cpu/thread_scratch.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

// The prepared outputs' epilogues on AVX512_BF16 CPUs (where the onednn kernel, whose prepared
// elements are bf16 bit patterns, runs): the product's rounding, the relu² (or its gradient)
// and the narrowing in one pass, 32 lanes at a time, with the operations of RoundBf16InPlace,
// ReluSquareRange / ReluSquareGradRange (relu(x) = (x + |x|) / 2; no multiply-add to fuse, so
// the same bits) and NarrowToBf16. The elements past the last 32 go through those functions.

[[gnu::target("avx512f"), gnu::always_inline]] inline __m512 Relu16(__m512 x) {
  return _mm512_mul_ps(_mm512_add_ps(x, _mm512_abs_ps(x)), _mm512_set1_ps(0.5f));
}

/// y rounded in place (the product's rounding), then r = relu(y)² narrowed.
[[gnu::target("avx512f,avx512bw,avx512bf16")]] int64_t RoundReluSquareNarrowAvx512(float* y, uint16_t* r, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 y_lo = RoundBf16Lanes(_mm512_loadu_ps(y + i));
    const __m512 y_hi = RoundBf16Lanes(_mm512_loadu_ps(y + i + 16));
    _mm512_storeu_ps(y + i, y_lo);
    _mm512_storeu_ps(y + i + 16, y_hi);
    const __m512 lo = Relu16(y_lo), hi = Relu16(y_hi);
    _mm512_storeu_si512(r + i, NarrowBf16x32(_mm512_mul_ps(lo, lo), _mm512_mul_ps(hi, hi)));
  }
  return i;
}

/// g = (bf16(dh) * 2) * relu(u): the gradient of the rounded product's relu².
[[gnu::target("avx512f,avx512bw,avx512bf16"), gnu::always_inline]] inline __m512 ReluSquareGrad16(const float* u,
                                                                                                 const float* dh) {
  return _mm512_mul_ps(_mm512_mul_ps(RoundBf16Lanes(_mm512_loadu_ps(dh)), _mm512_set1_ps(2.0f)), Relu16(_mm512_loadu_ps(u)));
}

[[gnu::target("avx512f,avx512bw,avx512bf16")]] int64_t ReluSquareGradNarrowAvx512(const float* u, const float* dh,
                                                                                  uint16_t* g, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 lo = ReluSquareGrad16(u + i, dh + i), hi = ReluSquareGrad16(u + i + 16, dh + i + 16);
    _mm512_storeu_si512(g + i, NarrowBf16x32(lo, hi));
  }
  return i;
}

/// Whether the epilogues above run: prepared elements are bf16 bit patterns and the CPU has
/// AVX512_BF16.
bool NarrowsInOnePass(Bf16Gemm kernel) {
  static const bool has = CpuIsaAtLeast(CpuIsa::kAvx512Bf16);
  return Bf16GemmReadsBits(kernel) && has;
}

/// y (the product, unrounded) rounded in place, then r = relu(y)² prepared for `kernel`, n
/// elements.
void RoundReluSquarePrepared(Bf16Gemm kernel, float* y, int64_t n, char* r) {
  const int64_t element = Bf16PreparedElementBytes(kernel);
  const int64_t done =
      NarrowsInOnePass(kernel) ? RoundReluSquareNarrowAvx512(y, reinterpret_cast<uint16_t*>(r), n) : 0;
  RoundBf16InPlace(y + done, n - done);
  static ThreadScratch squared_scratch;
  float* const squared = squared_scratch.Get<float>(std::max<int64_t>(n - done, 0));
  ReluSquareRange(y + done, squared, n - done);
  PrepareBf16Operand(kernel, squared, n - done, r + done * element);
}

/// g = ReluSquareGrad(u, bf16(dh)) prepared for `kernel`, n elements; dh is the product,
/// unrounded (its elements past the vector loop rounded in place).
void ReluSquareGradOfRoundedPrepared(Bf16Gemm kernel, const float* u, float* dh, int64_t n, char* g) {
  const int64_t element = Bf16PreparedElementBytes(kernel);
  const int64_t done =
      NarrowsInOnePass(kernel) ? ReluSquareGradNarrowAvx512(u, dh, reinterpret_cast<uint16_t*>(g), n) : 0;
  RoundBf16InPlace(dh + done, n - done);
  static ThreadScratch grad_scratch;
  float* const grad = grad_scratch.Get<float>(std::max<int64_t>(n - done, 0));
  ReluSquareGradRange(u + done, dh + done, grad, n - done);
  PrepareBf16Operand(kernel, grad, n - done, g + done * element);
}

}  // namespace

template <typename T>
void MatmulReluSquare(const T* x, const T* w, T* y, T* r, int64_t M, int64_t N, int64_t K) {
  MatmulThen<T>(x, w, y, M, N, K,
                [&](int64_t m0, int64_t m1) { ReluSquareRange(y + m0 * N, r + m0 * N, (m1 - m0) * N); });
}

void MatmulBf16RoundReluSquare(const float* x, const float* w, float* y, float* r, int64_t M, int64_t N, int64_t K) {
  MatmulBf16RoundReluSquarePrepared(x, /*x_prepared=*/false, w, y, r, /*r_prepared=*/false, M, N, K);
}

void MatmulBf16RoundReluSquarePrepared(const void* x, bool x_prepared, const float* w, float* y, void* r,
                                       bool r_prepared, int64_t M, int64_t N, int64_t K) {
  const Bf16Gemm kernel = ActiveBf16Gemm();
  char* const r_bytes = static_cast<char*>(r);
  const int64_t element = Bf16PreparedElementBytes(kernel);
  auto epilogue = [&](int64_t m0, int64_t m1) {
    if (!r_prepared) return ReluSquareRange(y + m0 * N, static_cast<float*>(r) + m0 * N, (m1 - m0) * N);
    for (int64_t m = m0; m < m1; ++m) RoundReluSquarePrepared(kernel, y + m * N, N, r_bytes + m * N * element);
  };
  // r prepared: the epilogue rounds y itself, a row at a time in cache, in the pass that reads it.
  if (r_prepared) return MatmulBf16ThenRoundingEpilogue(x, x_prepared, w, y, M, N, K, epilogue);
  if (x_prepared) return MatmulBf16PreparedXRoundedOutputThen(x, w, y, M, N, K, epilogue);
  MatmulBf16InputsRoundedOutputThen(static_cast<const float*>(x), w, y, M, N, K, epilogue);
}

namespace {

/// Whether [a, a + bytes) and [b, b + bytes) share a byte.
bool Overlap(const void* a, const void* b, int64_t bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bytes && y < x + bytes;
}

/// g prepared: each block's dh rows go to the running thread's scratch (Gemm's blocks and its
/// calls, matmul_bf16.h: the same bits as into dh), so g's prepared rows, at half width, may
/// take dh's bytes without overlapping rows another block has yet to read. Where g takes u's
/// bytes instead, its rows are gathered in dh's (unused then) and copied once every block has
/// read its rows of u.
void GradInputReluSquareGradPrepared(const float* dy, const float* w, const float* u, float* dh, void* g, int64_t M,
                                     int64_t N, int64_t K) {
  if (M <= 0 || K <= 0) return;  // no rows of g to write
  const Bf16Gemm kernel = ActiveBf16Gemm();
  const int64_t element = Bf16PreparedElementBytes(kernel);
  const bool over_u = Overlap(g, u, M * K * static_cast<int64_t>(sizeof(float)));
  char* const rows_out = static_cast<char*>(over_u ? static_cast<void*>(dh) : g);
  static ThreadScratch storage;
  const Bf16GemmB b(kernel, /*trans_b=*/false, /*N=*/K, /*K=*/N, w, K,
                    storage.Get<uint8_t>(Bf16GemmB::StorageBytes(kernel, K, N)));
  auto rows = [&](int64_t m0, int64_t m1) {
    const int64_t n = (m1 - m0) * K;
    static ThreadScratch dh_scratch;
    float* const dh_rows = dh_scratch.Get<float>(n);
    if (N > 0) {
      b.MultiplyRows(/*trans_a=*/false, m0, m1, dy, N, /*accumulate=*/false, dh_rows, K, /*round_output=*/false);
    } else {
      std::fill(dh_rows, dh_rows + n, 0.0f);  // no products (what BLAS gives with K = 0)
    }
    ReluSquareGradOfRoundedPrepared(kernel, u + m0 * K, dh_rows, n, rows_out + m0 * K * element);
  };
  ForEachGemmBlock(M, K, N, rows);
  if (!over_u) return;
  auto copy = [&](int64_t m0, int64_t m1) {
    std::memcpy(static_cast<char*>(g) + m0 * K * element, rows_out + m0 * K * element, (m1 - m0) * K * element);
  };
  ForEachGemmBlock(M, K, N, copy);
}

}  // namespace

void MatmulGradInputBf16ReluSquareGrad(const float* dy, const float* w, const float* u, float* dh, void* g,
                                       bool g_prepared, int64_t M, int64_t N, int64_t K) {
  if (g_prepared) return GradInputReluSquareGradPrepared(dy, w, u, dh, g, M, N, K);
  auto gradient_rows = [&](int64_t m0, int64_t m1) {
    ReluSquareGradRange(u + m0 * K, dh + m0 * K, static_cast<float*>(g) + m0 * K, (m1 - m0) * K);
  };
  const ChunkBody epilogue(gradient_rows);  // refers to gradient_rows, which outlives it
  MatmulGradInputBf16(dy, /*dy_prepared=*/false, w, dh, M, N, K, /*round_output=*/true, &epilogue);
}

template void MatmulReluSquare<float>(const float*, const float*, float*, float*, int64_t, int64_t, int64_t);
template void MatmulReluSquare<double>(const double*, const double*, double*, double*, int64_t, int64_t, int64_t);

}  // namespace gpt_sft::runtime::kernels
