// Implements RoundBf16, RoundBf16Into and RoundBf16InPlace: RoundToBf16's integer steps on
// AVX-512 or AVX2 vectors by the ISA level (base/cpu_isa.h), else a plain loop.
#include "runtime/kernels/cpu/round_bf16.h"

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16_avx2.h"
#include "runtime/kernels/cpu/round_bf16_avx512.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

/// RoundToBf16 of x into y, 16 lanes at a time; returns how many leading elements it rounded
/// (a multiple of 16). y may be x.
[[gnu::target("avx512f")]] int64_t RoundIntoAvx512(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_castps_si512(_mm512_loadu_ps(x + i));
    _mm512_storeu_ps(y + i, _mm512_castsi512_ps(RoundBf16Bits16(bits)));
  }
  return i;
}

/// The same, 8 lanes at a time.
[[gnu::target("avx2")]] int64_t RoundIntoAvx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i bits = _mm256_castps_si256(_mm256_loadu_ps(x + i));
    _mm256_storeu_ps(y + i, _mm256_castsi256_ps(RoundBf16Bits8(bits)));
  }
  return i;
}

const bool kHasAvx512 = CpuIsaAtLeast(CpuIsa::kAvx512);
const bool kHasAvx2 = CpuIsaAtLeast(CpuIsa::kAvx2);

}  // namespace

void RoundBf16Into(const float* x, float* y, int64_t n) {
  const int64_t done = kHasAvx512 ? RoundIntoAvx512(x, y, n) : kHasAvx2 ? RoundIntoAvx2(x, y, n) : 0;
  for (int64_t i = done; i < n; ++i) y[i] = RoundToBf16(x[i]);
}

void RoundBf16InPlace(float* x, int64_t n) { RoundBf16Into(x, x, n); }

void RoundBf16(const float* x, float* y, int64_t n) {
  constexpr int64_t kChunk = 1 << 15;
  ParallelFor(n, kChunk, [&](int64_t begin, int64_t end) {
    RoundBf16Into(x + begin, y + begin, end - begin);
  });
}

}  // namespace gpt_sft::runtime::kernels
