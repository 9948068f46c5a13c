// RoundToBf16 (round_bf16.h) on 8 f32 bit patterns: round_bf16_avx512.h's integer steps on AVX2
// registers, for CPUs without AVX-512 (the rounding passes and epilogues of the bf16 step, and
// the fp32 GEMM fallback's rounded operands). The same bits as the scalar and AVX-512 steps.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_AVX2_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_AVX2_H_

#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {

/// The bf16 values nearest the 8 f32 values whose bits are `bits` (ties to even; a NaN quieted
/// so it stays one), as f32 bit patterns: the low halves cleared. AVX2 compares only signed
/// integers; |bits| and 0x7f800000 are both non-negative as such, so the signed compare is
/// the unsigned one.
[[gnu::target("avx2"), gnu::always_inline]] inline __m256i RoundBf16Bits8(__m256i bits) {
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
  const __m256i quieted = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
  return _mm256_and_si256(_mm256_blendv_epi8(rounded, quieted, nan), _mm256_set1_epi32(static_cast<int>(0xffff0000u)));
}

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_AVX2_H_
