// The fused projection + residual + RMSNorm computes the unfused kernels' bits (the bf16
// rounded matmul, the residual add between roundings, RmsNorm), with its outputs in the
// arrangements a buffer plan may give them.
#include "runtime/kernels/cpu/matmul_residual_rms_norm.h"

#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/same_bits.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::ExpectSameBits;

TEST(MatmulBf16ResidualRmsNorm, IsRoundedMatmulResidualAddThenRmsNorm) {
  const int64_t M = 1000, N = 96, K = 64;
  const float eps = float(kRmsNormEps);
  const testing::Vec rx = testing::Random(M * K, 1), rw = testing::Random(N * K, 2), rr = testing::Random(M * N, 3);
  const std::vector<float> x(rx.begin(), rx.end()), w(rw.begin(), rw.end());
  std::vector<float> res(rr.begin(), rr.end());
  RoundBf16(res.data(), res.data(), M * N);  // the residual stream holds bf16 values
  std::vector<float> mm(M * N), sum(M * N), y(M * N);
  MatmulBf16InputsRoundedOutput(x.data(), w.data(), mm.data(), M, N, K);
  for (int64_t i = 0; i < M * N; ++i) sum[i] = RoundToBf16(res[i] + mm[i]);
  RmsNorm(sum.data(), y.data(), M, N, eps);

  // Separate buffers.
  std::vector<float> f_mm(M * N), f_sum(M * N), f_y(M * N);
  MatmulBf16ResidualRmsNorm(x.data(), w.data(), res.data(), f_mm.data(), f_sum.data(), f_y.data(), M, N, K, eps);
  ExpectSameBits(sum, f_sum, "sum");
  ExpectSameBits(y, f_y, "y");
  // sum in the product's bytes, y apart (the plan's usual choice).
  std::vector<float> shared(M * N), y2(M * N);
  MatmulBf16ResidualRmsNorm(x.data(), w.data(), res.data(), shared.data(), shared.data(), y2.data(), M, N, K, eps);
  ExpectSameBits(sum, shared, "sum over mm");
  ExpectSameBits(y, y2, "y");
  // sum over the residual, y over the product.
  std::vector<float> res_sum = res, mm_y(M * N);
  MatmulBf16ResidualRmsNorm(x.data(), w.data(), res_sum.data(), mm_y.data(), res_sum.data(), mm_y.data(), M, N, K,
                            eps);
  ExpectSameBits(sum, res_sum, "sum over res");
  ExpectSameBits(y, mm_y, "y over mm");
}

// With x as its producer wrote it and y written prepared, in each combination: the same bits
// (y prepared: the prepared bits of the f32 y).
TEST(MatmulBf16ResidualRmsNorm, PreparedOperandsGiveTheSameBits) {
  const int64_t M = 1000, N = 96, K = 64;
  const float eps = float(kRmsNormEps);
  const testing::Vec rx = testing::Random(M * K, 4), rw = testing::Random(N * K, 5), rr = testing::Random(M * N, 6);
  const std::vector<float> x(rx.begin(), rx.end()), w(rw.begin(), rw.end()), res(rr.begin(), rr.end());
  std::vector<float> x_prepared(M * K), mm(M * N), sum(M * N), y(M * N), want_y(M * N, -1.0f);
  PrepareBf16Operand(ActiveBf16Gemm(), x.data(), M * K, x_prepared.data());
  MatmulBf16ResidualRmsNorm(x.data(), w.data(), res.data(), mm.data(), sum.data(), y.data(), M, N, K, eps);
  PrepareBf16Operand(ActiveBf16Gemm(), y.data(), M * N, want_y.data());
  for (bool x_is_prepared : {false, true}) {
    for (bool y_is_prepared : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "x prepared " << x_is_prepared << ", y prepared " << y_is_prepared);
      std::vector<float> p_mm(M * N), p_sum(M * N), p_y(M * N, -1.0f);
      MatmulBf16ResidualRmsNormPrepared(x_is_prepared ? x_prepared.data() : x.data(), x_is_prepared, w.data(),
                                        res.data(), p_mm.data(), p_sum.data(), p_y.data(), y_is_prepared, M, N, K,
                                        eps);
      ExpectSameBits(sum, p_sum, "sum");
      ExpectSameBits(y_is_prepared ? want_y : y, p_y, "y");
    }
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
