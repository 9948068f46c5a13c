// RoundToBf16 (round_bf16.h) on 16 f32 bit patterns, for the kernels that round inside their
// own AVX-512 loops (the rounding passes, attention's rows, the bf16 softcap's table index, the
// narrowing of bf16 GEMM operands): one definition of the integer steps, so they cannot drift
// apart.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_AVX512_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_AVX512_H_

#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {

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

/// RoundBf16Bits16 on 16 f32 values: the bf16 values nearest them, as f32.
[[gnu::target("avx512f"), gnu::always_inline]] inline __m512 RoundBf16Lanes(__m512 x) {
  return _mm512_castsi512_ps(RoundBf16Bits16(_mm512_castps_si512(x)));
}

/// The bf16 bit patterns of RoundBf16Lanes(x), each in its lane's low half (a table index, or
/// what a narrowing to 16 bits stores).
[[gnu::target("avx512f"), gnu::always_inline]] inline __m512i Bf16Halves(__m512 x) {
  return _mm512_srli_epi32(RoundBf16Bits16(_mm512_castps_si512(x)), 16);
}

/// The bf16 halves of RoundBf16Bits16(lo) then of RoundBf16Bits16(hi), 32 bit patterns packed
/// in order: what a narrowing to bf16 storage writes. AVX512_BF16's vcvtne2ps2bf16 rounds a
/// normal number or a zero to nearest even exactly as the integer steps do (checked on all 2^32
/// patterns, round_bf16_avx512_test), in one instruction where those steps take nine plus a
/// two-uop narrowing move; it flushes subnormals and quiets NaN its own way, so 32 lanes with
/// any subnormal, infinity or NaN take the integer steps instead.
[[gnu::target("avx512f,avx512bw,avx512bf16"), gnu::always_inline]] inline __m512i NarrowBf16x32(__m512 lo,
                                                                                             __m512 hi) {
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), one = _mm512_set1_epi32(1);
  const __m512i subnormal_top = _mm512_set1_epi32(0x007ffffe), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i a = _mm512_and_si512(_mm512_castps_si512(lo), magnitude);
  const __m512i b = _mm512_and_si512(_mm512_castps_si512(hi), magnitude);
  // |x| - 1 <= 0x7ffffe (unsigned) is exactly a subnormal |x|; |x| >= inf an infinity or NaN.
  const __mmask16 special = _mm512_cmple_epu32_mask(_mm512_sub_epi32(a, one), subnormal_top) |
                            _mm512_cmple_epu32_mask(_mm512_sub_epi32(b, one), subnormal_top) |
                            _mm512_cmpge_epu32_mask(a, inf) | _mm512_cmpge_epu32_mask(b, inf);
  if (__builtin_expect(special == 0, 1)) return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(Bf16Halves(lo))),
                            _mm512_cvtepi32_epi16(Bf16Halves(hi)), 1);
}

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ROUND_BF16_AVX512_H_
