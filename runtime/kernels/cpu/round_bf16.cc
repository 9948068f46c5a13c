// Implements RoundBf16 and RoundBf16InPlace: RoundToBf16's integer steps, on AVX512 vectors
// where the CPU has AVX512F (a runtime check), else a plain loop.
#include "runtime/kernels/cpu/round_bf16.h"
#include "base/cpu_isa.h"

#include "runtime/kernels/cpu/x86_intrinsics.h"

#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16_avx512.h"

namespace gpt_sft::runtime::kernels {
namespace {

/// RoundToBf16 on 16 lanes at a time; returns how many leading elements it rounded (a
/// multiple of 16).
[[gnu::target("avx512f")]] int64_t RoundInPlaceAvx512(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_castps_si512(_mm512_loadu_ps(x + i));
    _mm512_storeu_ps(x + i, _mm512_castsi512_ps(RoundBf16Bits16(bits)));
  }
  return i;
}

bool HasAvx512() {
  static const bool has = CpuIsaAtLeast(CpuIsa::kAvx512);
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
