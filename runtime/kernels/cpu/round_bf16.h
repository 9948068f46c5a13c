// Rounding f32 values to bfloat16 values kept as f32: the meaning of gpt.round_bf16 (the
// rounding nanochat's bf16 autocast does after each op, NANOCHAT.md 1.2), over arrays.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_H_

#include <cstdint>
#include <cstring>

#include "model/round_to_bf16.h"

namespace gpt_sft::runtime::kernels {

/// The bfloat16 value nearest `x` (round to nearest, ties to even), as an f32; NaN stays a
/// NaN, values past bf16's range round to inf (model/round_to_bf16.h, the one
/// definition the compiler's constant tables share).
using compiler::RoundToBf16;

/// The bit pattern of RoundToBf16(x) (the top half of its f32): what bf16 storage holds, or a
/// table index.
inline uint16_t Bf16BitsOf(float x) {
  const float rounded = RoundToBf16(x);
  uint32_t bits;
  std::memcpy(&bits, &rounded, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

/// The bf16 value whose bit pattern is `bits`, as an f32 (exact).
inline float FromBf16Bits(uint16_t bits) {
  const uint32_t wide = uint32_t{bits} << 16;
  float x;
  std::memcpy(&x, &wide, sizeof x);
  return x;
}

/// y[i] = RoundToBf16(x[i]) for n elements, parallel over chunks; y may alias x.
void RoundBf16(const float* x, float* y, int64_t n);

/// y[i] = RoundToBf16(x[i]) for n elements on the calling thread: 16 lanes at a time at the
/// avx512 ISA level, 8 at avx2 (the same integer steps, so the same bits), else one at a time.
/// y may be x. For kernels that round a row or chunk they just wrote, while it is in cache
/// (the rounding epilogues), or copy an operand rounded (the fp32 GEMM fallback).
void RoundBf16Into(const float* x, float* y, int64_t n);
/// RoundBf16Into(x, x, n).
void RoundBf16InPlace(float* x, int64_t n);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_H_
