// RoundToBf16 (round_bf16.h) on 16 f32 bit patterns, for the kernels that round inside their
// own AVX-512 loops (the rounding passes, the bf16 softcap's table index, the narrowing of
// bf16 GEMM operands): one definition of the integer steps, so they cannot drift apart.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_AVX512_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_AVX512_H_

#include <immintrin.h>

namespace gpt_sft::runtime::kernels {

// GCC 12's avx512fintrin.h reads its own deliberately undefined vectors
// (_mm512_undefined_*) and warns about them where its intrinsics are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

/// The bf16 values nearest the 16 f32 values whose bits are `bits` (ties to even; a NaN
/// quieted so it stays one), as f32 bit patterns: the low halves cleared.
[[gnu::target("avx512f"), gnu::always_inline]] inline __m512i RoundBf16Bits16(__m512i bits) {
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb));
  const __m512i quieted = _mm512_or_si512(bits, _mm512_set1_epi32(0x00400000));
  return _mm512_and_si512(_mm512_mask_blend_epi32(nan, rounded, quieted),
                          _mm512_set1_epi32(static_cast<int>(0xffff0000u)));
}

#pragma GCC diagnostic pop

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_AVX512_H_
