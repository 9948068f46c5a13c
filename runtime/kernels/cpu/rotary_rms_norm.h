// nanochat's QK-norm after rotary as one pass per head row, the compiled cpu step's fusion
// (the compiler's decision: compiler/lowering/cpu/lower_to_cpu_pass.cc):
//   forward   rot = rotary(x) by nanochat's tables,  y = rms_norm(rot) over D
//   backward  dx  = rotary_grad(rms_norm_grad(rot, dy)) by the same tables
// for x, rot, y, dy, dx [B, T, H, D], positions [B, T] in [0, P), cos and sin [P, D/2] f32
// (model/rotary_table.h's FillRotaryTables). Each head row is rotated and normed
// while it is in cache, by exactly the arithmetic of RotaryFromTables and RmsNormRow /
// RmsNormGradRow, so the results are bit-identical to the unfused kernels (and so to the
// interpreter's). The forward keeps rot (the backward's input); the backward never writes
// rms_norm_grad's result. Buffers may be the same bytes as each other (a row is read before
// it is written) but must not partly overlap; positions are not checked here.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_ROTARY_RMS_NORM_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_ROTARY_RMS_NORM_H_

#include <cstdint>

#include "runtime/kernels/cpu/rotary.h"

namespace gpt_sft::runtime::kernels {

template <typename T>
void RotaryRmsNorm(const T* x, const int32_t* positions, const float* cos, const float* sin, T* rot, T* y,
                   RotaryShape s, T eps);

/// RotaryRmsNorm under bf16 autocast: rot = the bf16 rotary (RotateRowFromTablesBf16) and y =
/// RoundBf16(rms_norm(rot)), the same bits as rotary_tables_bf16, rms_norm and round_bf16.
void RotaryRmsNormRoundBf16(const float* x, const int32_t* positions, const float* cos, const float* sin, float* rot,
                            float* y, RotaryShape s, float eps);

/// RmsNormRotaryGrad under bf16 autocast: dx = rotary_grad_bf16(RoundBf16(rms_norm_grad(rot,
/// RoundBf16(dy)))), the same bits as rms_norm_grad_of_rounded_dy (rounding dx) followed by
/// rotary_grad_tables_bf16; dx may be dy's bytes.
void RmsNormRotaryGradOfRoundedDyBf16(const float* rot, const float* dy, const int32_t* positions, const float* cos,
                                      const float* sin, float* dx, RotaryShape s, float eps);

template <typename T>
void RmsNormRotaryGrad(const T* rot, const T* dy, const int32_t* positions, const float* cos, const float* sin, T* dx,
                       RotaryShape s, T eps);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ROTARY_RMS_NORM_H_
