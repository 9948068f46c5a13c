// Implements the matmul + relu² fusion on the GEMMs' own row blocks (MatmulThen,
// MatmulBf16InputsRoundedOutputThen) with ReluSquareRange as their epilogue.
#include "runtime/kernels/cpu/matmul_relu_square.h"

#include <vector>

#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/pointwise.h"

namespace gpt_sft::runtime::kernels {

template <typename T>
void MatmulReluSquare(const T* x, const T* w, T* y, T* r, int64_t M, int64_t N, int64_t K) {
  MatmulThen<T>(x, w, y, M, N, K,
                [&](int64_t m0, int64_t m1) { ReluSquareRange(y + m0 * N, r + m0 * N, (m1 - m0) * N); });
}

void MatmulBf16RoundReluSquare(const float* x, const float* w, float* y, float* r, int64_t M, int64_t N, int64_t K) {
  MatmulBf16InputsRoundedOutputThen(
      x, w, y, M, N, K, [&](int64_t m0, int64_t m1) { ReluSquareRange(y + m0 * N, r + m0 * N, (m1 - m0) * N); });
}

void MatmulBf16RoundReluSquarePrepared(const void* x, bool x_prepared, const float* w, float* y, void* r,
                                       bool r_prepared, int64_t M, int64_t N, int64_t K) {
  const Bf16Gemm kernel = ActiveBf16Gemm();
  char* const r_bytes = static_cast<char*>(r);
  const int64_t element = Bf16PreparedElementBytes(kernel);
  auto epilogue = [&](int64_t m0, int64_t m1) {
    if (!r_prepared) return ReluSquareRange(y + m0 * N, static_cast<float*>(r) + m0 * N, (m1 - m0) * N);
    thread_local std::vector<float> squared;  // a row, squared, then prepared while in cache
    squared.resize(N);
    for (int64_t m = m0; m < m1; ++m) {
      ReluSquareRange(y + m * N, squared.data(), N);
      PrepareBf16Operand(kernel, squared.data(), N, r_bytes + m * N * element);
    }
  };
  if (x_prepared) return MatmulBf16PreparedXRoundedOutputThen(x, w, y, M, N, K, epilogue);
  MatmulBf16InputsRoundedOutputThen(static_cast<const float*>(x), w, y, M, N, K, epilogue);
}

template void MatmulReluSquare<float>(const float*, const float*, float*, float*, int64_t, int64_t, int64_t);
template void MatmulReluSquare<double>(const double*, const double*, double*, double*, int64_t, int64_t, int64_t);

}  // namespace gpt_sft::runtime::kernels
