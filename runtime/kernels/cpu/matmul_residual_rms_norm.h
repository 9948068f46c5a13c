// A block's output projection under bf16 autocast with the residual add and the next
// RMSNorm as its epilogue, the compiled cpu step's fusion of gpt.matmul, the fusion
// round_bf16 -> add -> round_bf16 that joins it to the residual stream, and the rms_norm of
// the sum right after:
//   mm = x w^T (bf16 products),  sum = RoundBf16(res + RoundBf16(mm)),  y = RmsNorm(sum)
// each Gemm row block done while in cache (the norm's rows are the product's: N is the
// model width), instead of two more passes over [M, N]. The same bits as
// MatmulBf16InputsRoundedOutput, that fusion's kernel and RmsNorm.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_RESIDUAL_RMS_NORM_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_RESIDUAL_RMS_NORM_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

/// x [M, K], w [N, K], res [M, N] → mm (scratch for the product, [M, N]), sum, y [M, N].
/// mm, sum and y may share bytes with each other, sum and y with res (a row is read before
/// it is written); none with x or w, and mm none with res.
void MatmulBf16ResidualRmsNorm(const float* x, const float* w, const float* res, float* mm, float* sum, float* y,
                               int64_t M, int64_t N, int64_t K, float eps);
/// The same with x as its producer wrote it (x_prepared: prepared for the bf16 GEMM,
/// matmul_bf16.h) and y written prepared for the bf16 GEMMs that alone read it (y_prepared,
/// [M, N] compact): the compiler's choices, the same bits. A prepared y shares no byte with
/// any other operand.
void MatmulBf16ResidualRmsNormPrepared(const void* x, bool x_prepared, const float* w, const float* res, float* mm,
                                       float* sum, void* y, bool y_prepared, int64_t M, int64_t N, int64_t K,
                                       float eps);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_RESIDUAL_RMS_NORM_H_
