// The residual stream's add with the RMSNorm beside it, one pass per row, the compiled cpu
// step's fusions (the compiler's decision: compiler/lowering/cpu/lower_to_cpu_pass.cc), for
// rows [rows, dim]:
//   forward   sum = a + b,  y = rms_norm(sum)           (the next block's input norm)
//   backward  out = lhs + rhs with one of them rms_norm_grad(x, dy), the other r
//             (the residual gradient joining the norm's), the norm's gradient never written;
//             under bf16 autocast out rounded to bf16 values too
// Each row is computed by exactly the arithmetic of Add and RmsNormRow / RmsNormGradRow
// (IEEE addition is commutative, so operand order needs no flag), so the results are
// bit-identical to the unfused kernels (and so to the interpreter's). Buffers may be the same
// bytes as each other but must not partly overlap. The backward keeps the norm's gradient
// row on the stack: dim <= kMaxResidualRmsNormDim.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_RESIDUAL_RMS_NORM_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_RESIDUAL_RMS_NORM_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

inline constexpr int64_t kMaxResidualRmsNormDim = 4096;

template <typename T>
void AddRmsNorm(const T* a, const T* b, T* sum, T* y, int64_t rows, int64_t dim, T eps);

template <typename T>
void RmsNormGradAdd(const T* x, const T* dy, const T* r, T* out, int64_t rows, int64_t dim, T eps);

/// RmsNormGradAdd with out rounded to bf16 values (RoundBf16): under bf16 autocast the residual
/// gradient joins the norm's in a fusion add -> round_bf16; the same bits as that fusion after
/// RmsNormGrad.
void RmsNormGradAddRoundBf16(const float* x, const float* dy, const float* r, float* out, int64_t rows, int64_t dim,
                             float eps);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_RESIDUAL_RMS_NORM_H_
