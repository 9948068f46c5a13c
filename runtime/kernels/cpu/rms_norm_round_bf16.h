// RMSNorm and its gradient with the bf16 step's autocast rounding of the result fused in:
// each row rounded to bf16 values right after it is written, while it is in cache. The same
// bits as RmsNorm / RmsNormGrad (rms_norm.h) followed by RoundBf16 (round_bf16.h) over the
// result, without the second pass over memory (the compiled step's epilogue for a lone
// gpt.round_bf16 that is the norm's only reader).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_RMS_NORM_ROUND_BF16_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_RMS_NORM_ROUND_BF16_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

/// y = RoundBf16(RmsNorm(x)), [rows, dim], parallel over rows.
void RmsNormRoundBf16(const float* x, float* y, int64_t rows, int64_t dim, float eps);
/// dx = RoundBf16(RmsNormGrad(x, dy)), parallel over rows.
void RmsNormGradRoundBf16(const float* x, const float* dy, float* dx, int64_t rows, int64_t dim, float eps);
/// dx = RmsNormGrad(x, RoundBf16(dy)), rounded again when `round_dx`: the rounding of the
/// cotangent before the norm's gradient as a prologue (each dy row rounded into a row buffer
/// first), never written. dx may be dy's bytes (each row is read before it is written).
void RmsNormGradOfRoundedDy(const float* x, const float* dy, float* dx, int64_t rows, int64_t dim, float eps,
                            bool round_dx);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_RMS_NORM_ROUND_BF16_H_
