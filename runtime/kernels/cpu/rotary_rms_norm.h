// nanochat's QK-norm after rotary as one pass per head row, the compiled cpu step's fusion
// (the compiler's decision: compiler/lowering/cpu/lower_to_cpu_pass.cc):
//   forward   rot = rotary(x) by nanochat's tables,  y = rms_norm(rot) over D
//   backward  dx  = rotary_grad(rms_norm_grad(rot, dy)) by the same tables
// for x, rot, y, dy, dx [B, T, H, D], positions [B, T] in [0, P), cos and sin [P, D/2] f32
// (compiler/numerics/rotary_table.h's FillRotaryTables). Each head row is rotated and normed
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

template <typename T>
void RmsNormRotaryGrad(const T* rot, const T* dy, const int32_t* positions, const float* cos, const float* sin, T* dx,
                       RotaryShape s, T eps);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ROTARY_RMS_NORM_H_
