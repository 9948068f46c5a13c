// Implements NewtonSchulz5Bf16. X, A and B live as the bf16 GEMMs read them (prepared for the
// active kernel, matmul_bf16.h: bf16 bit patterns for onednn, bf16 values as f32 for fp32), so
// no product narrows its operands; each product is followed by one pass that computes the
// step's epilogue in f32, rounds it and writes it prepared, 32 lanes at a time on AVX512_BF16
// CPUs. Built with -ffp-contract=off: the epilogues' products and sums round one by one, as the
// definition's do (no fused multiply-add), in the vector loops and the scalar ones alike.
#include "runtime/kernels/cpu/newton_schulz_bf16.h"

#include <cmath>
#include <type_traits>

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/round_bf16_avx512.h"
#include "runtime/kernels/cpu/vec_math.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr float kA = 3.4445f, kB = -4.7750f, kC = 2.0315f;

// A prepared element: E = uint16_t (bf16 bit patterns) or float (a bf16 value).
inline float Widen(uint16_t e) { return FromBf16Bits(e); }
inline float Widen(float e) { return e; }
/// Stores the bf16 value nearest x.
inline void StoreRounded(float x, uint16_t* e) { *e = Bf16BitsOf(x); }
inline void StoreRounded(float x, float* e) { *e = RoundToBf16(x); }

/// The epilogue of A A: c (A A) + b A.
struct ScaledSum {
  float operator()(float product, float a) const { return kC * product + kB * a; }
  [[gnu::target("avx512f"), gnu::always_inline]] __m512 operator()(__m512 product, __m512 a) const {
    return _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(kC), product), _mm512_mul_ps(_mm512_set1_ps(kB), a));
  }
};
/// The epilogue of B X: B X + a X.
struct Sum {
  float operator()(float product, float x) const { return product + kA * x; }
  [[gnu::target("avx512f"), gnu::always_inline]] __m512 operator()(__m512 product, __m512 x) const {
    return _mm512_add_ps(product, _mm512_mul_ps(_mm512_set1_ps(kA), x));
  }
};

[[gnu::target("avx512f,avx512bw,avx512bf16"), gnu::always_inline]] inline __m512 Widen16(const uint16_t* e) {
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(e))), 16));
}

/// out[i] = bf16(op(product[i], q[i])) for i in [0, n) on bf16 bit patterns, 32 at a time;
/// returns how many it did.
template <typename Op>
[[gnu::target("avx512f,avx512bw,avx512bf16")]] int64_t EpilogueAvx512(const float* product, const uint16_t* q,
                                                                      int64_t n, const Op& op, uint16_t* out) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 lo = op(_mm512_loadu_ps(product + i), Widen16(q + i));
    const __m512 hi = op(_mm512_loadu_ps(product + i + 16), Widen16(q + i + 16));
    _mm512_storeu_si512(out + i, NarrowBf16x32(lo, hi));
  }
  return i;
}

/// out[i] = bf16(op(product[i], q[i])), prepared; out may be q.
template <typename E, typename Op>
void Epilogue(const float* product, const E* q, int64_t n, const Op& op, E* out) {
  int64_t done = 0;
  if constexpr (std::is_same_v<E, uint16_t>) {
    static const bool vector = CpuIsaAtLeast(CpuIsa::kAvx512Bf16);
    if (vector) done = EpilogueAvx512(product, q, n, op, out);
  }
  for (int64_t i = done; i < n; ++i) StoreRounded(op(product[i], Widen(q[i])), out + i);
}

template <typename E>
void NewtonSchulz5Prepared(Bf16Gemm kernel, const float* g, float* out, int64_t rows, int64_t cols, float* scratch) {
  const bool tall = rows > cols;
  const int64_t r = tall ? cols : rows, n = tall ? rows : cols;  // X is [r, n], r <= n
  float* product = scratch;                                      // [r, n] f32: X X^T, A A, B X
  E* x = reinterpret_cast<E*>(product + r * n);                  // [r, n]
  E* A = x + r * n;                                              // [r, r]
  E* B = A + r * r;                                              // [r, r]
  // X = bf16(G), transposed when tall, then bf16(X / (||X|| + 1e-7)); the first X in product.
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) (tall ? product[j * n + i] : product[i * n + j]) = RoundToBf16(g[i * cols + j]);
  const double inv = 1.0 / (std::sqrt(SumOfSquares(product, r * n)) + 1e-7);
  for (int64_t i = 0; i < r * n; ++i) StoreRounded(float(double(product[i]) * inv), x + i);
  for (int step = 0; step < 5; ++step) {
    GemmBf16Prepared(kernel, false, true, r, r, n, x, n, x, n, /*accumulate=*/false, product, r);  // X X^T
    PrepareBf16Operand(kernel, product, r * r, A);                                                  // A = bf16(.)
    GemmBf16Prepared(kernel, false, false, r, r, r, A, r, A, r, false, product, r);                 // A A
    Epilogue(product, A, r * r, ScaledSum{}, B);
    GemmBf16Prepared(kernel, false, false, r, n, r, B, r, x, n, false, product, n);  // B X
    Epilogue(product, x, r * n, Sum{}, x);
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = Widen(tall ? x[j * n + i] : x[i * n + j]);
}

}  // namespace

void NewtonSchulz5Bf16(const float* g, float* out, int64_t rows, int64_t cols, float* scratch) {
  const Bf16Gemm kernel = ActiveBf16Gemm();
  if (Bf16GemmReadsBits(kernel)) return NewtonSchulz5Prepared<uint16_t>(kernel, g, out, rows, cols, scratch);
  NewtonSchulz5Prepared<float>(kernel, g, out, rows, cols, scratch);
}

}  // namespace gpt_sft::runtime::kernels
