// Implements RoundBf16 and RoundBf16InPlace: RoundToBf16's integer steps, on AVX512 vectors
// where the CPU has AVX512F (a runtime check), else a plain loop.
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/cpu_features.h"

#include <immintrin.h>

#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {
namespace {

// GCC 12's avx512fintrin.h reads its own deliberately undefined vectors
// (_mm512_undefined_*) and warns about them where its intrinsics are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

/// RoundToBf16 on 16 lanes: a NaN quieted, else 0x7fff plus the kept part's lowest bit added;
/// the low half cleared. Returns how many leading elements it rounded (a multiple of 16).
[[gnu::target("avx512f")]] int64_t RoundInPlaceAvx512(float* x, int64_t n) {
  const __m512i magnitude_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff), quiet = _mm512_set1_epi32(0x00400000);
  const __m512i high_half = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_castps_si512(_mm512_loadu_ps(x + i));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, magnitude_mask), inf);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), one);
    const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(bias, lsb));
    const __m512i chosen = _mm512_mask_blend_epi32(nan, rounded, _mm512_or_si512(bits, quiet));
    _mm512_storeu_ps(x + i, _mm512_castsi512_ps(_mm512_and_si512(chosen, high_half)));
  }
  return i;
}

#pragma GCC diagnostic pop

bool HasAvx512() {
  static const bool has = CpuHasAvx512F();
  return has;
}

}  // namespace

void RoundBf16InPlace(float* x, int64_t n) {
  const int64_t done = HasAvx512() ? RoundInPlaceAvx512(x, n) : 0;
  for (int64_t i = done; i < n; ++i) x[i] = RoundToBf16(x[i]);
}

void RoundBf16(const float* x, float* y, int64_t n) {
  constexpr int64_t kChunk = 1 << 15;
  ParallelFor(n, kChunk, [&](int64_t begin, int64_t end) {
    if (x != y) {
      for (int64_t i = begin; i < end; ++i) y[i] = x[i];
    }
    RoundBf16InPlace(y + begin, end - begin);
  });
}

}  // namespace gpt_sft::runtime::kernels
