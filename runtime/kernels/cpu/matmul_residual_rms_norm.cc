// Implements the projection + residual + RMSNorm fusion as the bf16 GEMM's row-block
// epilogue (MatmulBf16InputsRoundedOutputThen), row by row.
#include "runtime/kernels/cpu/matmul_residual_rms_norm.h"

#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

/// The epilogue on rows [m0, m1) of the rounded product mm.
void ResidualNormRows(const float* res, const float* mm, float* sum, float* y, int64_t m0, int64_t m1, int64_t N,
                      float eps) {
  for (int64_t r = m0; r < m1; ++r) {
    const float* a = res + r * N;
    const float* b = mm + r * N;  // already rounded by the product's epilogue
    float* s = sum + r * N;
#pragma GCC ivdep  // s may be a's or b's bytes: element j reads only a[j], b[j]
    for (int64_t j = 0; j < N; ++j) s[j] = a[j] + b[j];
    RoundBf16InPlace(s, N);
  }
  RmsNormRows(sum + m0 * N, y + m0 * N, m1 - m0, N, eps);
}

}  // namespace

void MatmulBf16ResidualRmsNorm(const float* x, const float* w, const float* res, float* mm, float* sum, float* y,
                               int64_t M, int64_t N, int64_t K, float eps) {
  MatmulBf16InputsRoundedOutputThen(
      x, w, mm, M, N, K, [&](int64_t m0, int64_t m1) { ResidualNormRows(res, mm, sum, y, m0, m1, N, eps); });
}

void MatmulBf16ResidualRmsNormPreparedX(const void* x, const float* w, const float* res, float* mm, float* sum,
                                        float* y, int64_t M, int64_t N, int64_t K, float eps) {
  MatmulBf16PreparedXRoundedOutputThen(
      x, w, mm, M, N, K, [&](int64_t m0, int64_t m1) { ResidualNormRows(res, mm, sum, y, m0, m1, N, eps); });
}

}  // namespace gpt_sft::runtime::kernels
