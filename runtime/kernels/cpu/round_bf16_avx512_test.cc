// NarrowBf16x32 against the integer steps it shortcuts, on every one of the 2^32 f32 bit
// patterns (in groups of 32 that mix the lanes' kinds), on CPUs with AVX512_BF16.
#include "runtime/kernels/cpu/round_bf16_avx512.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

/// The first of `count` groups of 32 patterns starting at `first` whose narrowing differs from
/// the integer steps', or -1.
[[gnu::target("avx512f,avx512bw,avx512bf16")]] int64_t FirstMismatch(uint64_t first, uint64_t count,
                                                                   const uint32_t* lanes) {
  const __m512i step = _mm512_set1_epi32(32);
  __m512i lo = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(first)), _mm512_loadu_si512(lanes));
  __m512i hi = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(first)), _mm512_loadu_si512(lanes + 16));
  for (uint64_t g = 0; g < count; ++g) {
    const __m512i got = NarrowBf16x32(_mm512_castsi512_ps(lo), _mm512_castsi512_ps(hi));
    const __m512i want = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm512_cvtepi32_epi16(_mm512_srli_epi32(RoundBf16Bits16(lo), 16))),
        _mm512_cvtepi32_epi16(_mm512_srli_epi32(RoundBf16Bits16(hi), 16)), 1);
    if (_mm512_cmpneq_epi32_mask(got, want) != 0) return static_cast<int64_t>(g);
    lo = _mm512_add_epi32(lo, step);
    hi = _mm512_add_epi32(hi, step);
  }
  return -1;
}

TEST(NarrowBf16x32, EveryPatternMatchesTheIntegerSteps) {
  if (!CpuIsaAtLeast(CpuIsa::kAvx512Bf16)) GTEST_SKIP() << "this CPU has no AVX512_BF16";
  // Lane i of a group holds first + 32 g + i: consecutive patterns, so each group of 32 is
  // all normal numbers save where it crosses a boundary of the kinds, and the lanes of every
  // kind are each covered once over the 2^27 groups.
  uint32_t lanes[32];
  for (uint32_t i = 0; i < 32; ++i) lanes[i] = i;
  EXPECT_EQ(FirstMismatch(0, uint64_t{1} << 27, lanes), -1);
  // Groups with one special lane among normal ones (the fallback's whole-group path): a
  // subnormal, an infinity and a NaN beside normal numbers that round up, down and to even.
  const uint32_t specials[] = {0x00000001u, 0x007fffffu, 0x80400000u, 0x7f800000u, 0xff800000u, 0x7fc00001u,
                               0xff812345u, 0x00000000u, 0x80000000u};
  for (uint32_t special : specials) {
    for (uint32_t at = 0; at < 32; ++at) {
      uint32_t group[32];
      for (uint32_t i = 0; i < 32; ++i) group[i] = 0x3f808000u + 0x00010000u * i + (i & 1);  // ties and above
      group[at] = special;
      EXPECT_EQ(FirstMismatch(0, 1, group), -1) << "special 0x" << std::hex << special << " at lane " << std::dec << at;
    }
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
