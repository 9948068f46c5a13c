// A 16 x 16 block of 32-bit values transposed in AVX-512 registers: how the AMX kernels turn
// bf16 pairs stored along one dimension into the rows their tiles read (attention's K^T and
// V^T tiles, tile_gemm_bf16.cc; a transposed A or B of the bf16 GEMM, amx_gemm_bf16.cc).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_TRANSPOSE16X16_AVX512_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_TRANSPOSE16X16_AVX512_H_

#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {

// r[i] holds row i of a 16 x 16 block of 32-bit values; afterwards r[c] holds its column c:
// pairs of rows interleaved by 32 bits, then by 64, then 128-bit lanes gathered twice.
[[gnu::target("avx512f"), gnu::always_inline]] inline void Transpose16x16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  // r[4i + c], 128-bit lane L: rows 4i .. 4i+3 of column 4L + c.
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 4; ++c) {
      t[8 * i + c] = _mm512_shuffle_i32x4(r[8 * i + c], r[8 * i + 4 + c], 0x88);
      t[8 * i + 4 + c] = _mm512_shuffle_i32x4(r[8 * i + c], r[8 * i + 4 + c], 0xdd);
    }
  for (int c = 0; c < 8; ++c) {
    r[c] = _mm512_shuffle_i32x4(t[c], t[8 + c], 0x88);
    r[c + 8] = _mm512_shuffle_i32x4(t[c], t[8 + c], 0xdd);
  }
}

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_TRANSPOSE16X16_AVX512_H_
