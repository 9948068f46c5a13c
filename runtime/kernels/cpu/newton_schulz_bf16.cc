// Implements NewtonSchulz5Bf16: the three products per step on GemmBf16Inputs, each followed
// by one elementwise pass on the pool that applies the step's epilogue and rounds.
#include "runtime/kernels/cpu/newton_schulz_bf16.h"

#include <cmath>

#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/vec_math.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kChunk = 1 << 14;

/// y[i] = bf16(f(i)) for i in [0, n), on the pool.
template <typename F>
void RoundEach(int64_t n, float* y, const F& f) {
  ParallelFor(n, kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = RoundToBf16(f(i));
  });
}

}  // namespace

void NewtonSchulz5Bf16(const float* g, float* out, int64_t rows, int64_t cols, float* scratch) {
  constexpr float a = 3.4445f, b = -4.7750f, c = 2.0315f;
  const bool tall = rows > cols;
  const int64_t r = tall ? cols : rows, n = tall ? rows : cols;  // X is [r, n], r <= n
  float* x = scratch;            // [r, n]
  float* product = x + r * n;    // [r, n]: A A, then B X
  float* A = product + r * n;    // [r, r]
  float* B = A + r * r;          // [r, r]
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) (tall ? x[j * n + i] : x[i * n + j]) = RoundToBf16(g[i * cols + j]);
  const double inv = 1.0 / (std::sqrt(SumOfSquares(x, r * n)) + 1e-7);
  RoundEach(r * n, x, [&](int64_t i) { return float(double(x[i]) * inv); });
  const Bf16Gemm kernel = ActiveBf16Gemm();
  for (int step = 0; step < 5; ++step) {
    GemmBf16Inputs(kernel, false, true, r, r, n, x, n, x, n, /*accumulate=*/false, A, r);  // X X^T
    RoundEach(r * r, A, [&](int64_t i) { return A[i]; });
    GemmBf16Inputs(kernel, false, false, r, r, r, A, r, A, r, false, product, r);  // A A
    RoundEach(r * r, B, [&](int64_t i) { return c * product[i] + b * A[i]; });
    GemmBf16Inputs(kernel, false, false, r, n, r, B, r, x, n, false, product, n);  // B X
    RoundEach(r * n, x, [&](int64_t i) { return product[i] + a * x[i]; });
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = tall ? x[j * n + i] : x[i * n + j];
}

}  // namespace gpt_sft::runtime::kernels
