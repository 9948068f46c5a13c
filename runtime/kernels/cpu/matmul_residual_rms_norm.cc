// Implements the projection + residual + RMSNorm fusion as the bf16 GEMM's row-block
// epilogue (MatmulBf16InputsRoundedOutputThen), row by row.
#include "runtime/kernels/cpu/matmul_residual_rms_norm.h"


#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/thread_scratch.h"

namespace gpt_sft::runtime::kernels {
namespace {

/// The epilogue on rows [m0, m1) of the rounded product mm: sum, then the norm into y (f32), or
/// (y_prepared) into `norm_rows` and from there prepared into y.
void ResidualNormRows(const float* res, const float* mm, float* sum, void* y, bool y_prepared, int64_t m0, int64_t m1,
                      int64_t N, float eps) {
  for (int64_t r = m0; r < m1; ++r) {
    const float* a = res + r * N;
    const float* b = mm + r * N;  // already rounded by the product's epilogue
    float* s = sum + r * N;
#pragma GCC ivdep  // s may be a's or b's bytes: element j reads only a[j], b[j]
    for (int64_t j = 0; j < N; ++j) s[j] = a[j] + b[j];
    RoundBf16InPlace(s, N);
  }
  if (!y_prepared) return RmsNormRows(sum + m0 * N, static_cast<float*>(y) + m0 * N, m1 - m0, N, eps);
  const Bf16Gemm kernel = ActiveBf16Gemm();
  const int64_t element = Bf16PreparedElementBytes(kernel);
  static ThreadScratch norm_scratch;
  float* const norm_rows = norm_scratch.Get<float>((m1 - m0) * N);
  RmsNormRows(sum + m0 * N, norm_rows, m1 - m0, N, eps);
  PrepareBf16Operand(kernel, norm_rows, (m1 - m0) * N, static_cast<char*>(y) + m0 * N * element);
}

}  // namespace

void MatmulBf16ResidualRmsNorm(const float* x, const float* w, const float* res, float* mm, float* sum, float* y,
                               int64_t M, int64_t N, int64_t K, float eps) {
  MatmulBf16ResidualRmsNormPrepared(x, false, w, res, mm, sum, y, false, M, N, K, eps);
}

void MatmulBf16ResidualRmsNormPrepared(const void* x, bool x_prepared, const float* w, const float* res, float* mm,
                                       float* sum, void* y, bool y_prepared, int64_t M, int64_t N, int64_t K,
                                       float eps) {
  auto epilogue = [&](int64_t m0, int64_t m1) { ResidualNormRows(res, mm, sum, y, y_prepared, m0, m1, N, eps); };
  if (x_prepared) return MatmulBf16PreparedXRoundedOutputThen(x, w, mm, M, N, K, epilogue);
  MatmulBf16InputsRoundedOutputThen(static_cast<const float*>(x), w, mm, M, N, K, epilogue);
}

}  // namespace gpt_sft::runtime::kernels
