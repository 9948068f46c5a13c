// vec_math's float exp on 16 lanes (vec_math.h: the Cephes-style polynomial, 0 below
// -87.3), for the kernels that fuse it into their own row loops (attention_rows.h) and must
// give vec_math's bits: one definition, so they cannot drift apart. Its AVX2 twin (Exp8 in
// vec_math.cc) does the same operations on 8 lanes.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_EXP_AVX512_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_EXP_AVX512_H_

#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {

[[gnu::target("avx512f"), gnu::always_inline]] inline __m512 Exp16(__m512 x) {
  const __mmask16 underflow = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.33654f), _CMP_LT_OQ);
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.33654f)), _mm512_set1_ps(88.37626f));
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 y = _mm512_set1_ps(1.9875691500e-4f);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127)), 23);
  y = _mm512_mul_ps(y, _mm512_castsi512_ps(bits));
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~underflow), y);
}

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_EXP_AVX512_H_
