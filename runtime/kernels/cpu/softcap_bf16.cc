// Implements the table-driven bf16 softcap: the tables in a process-wide list under a mutex
// (one per cap; a step has one cap), the per-element division and rounding as the formula
// does them: 16 lanes at a time with an AVX512 gather where the CPU has AVX512F (IEEE
// division and the same integer rounding, so the same bits), else one at a time. When the
// input is rounded first it is one of 65536 values too, so a second table keyed on its bits
// holds the whole formula and the division goes (the softcap of the logits, the common case).
#include "runtime/kernels/cpu/softcap_bf16.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/round_bf16_avx2.h"
#include "runtime/kernels/cpu/round_bf16_avx512.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kEntries = kSoftcapBf16TableHalf;
constexpr int64_t kChunk = 1 << 14;

uint32_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

std::unique_ptr<float[]> MakeTable(float cap) {
  auto table = std::make_unique<float[]>(2 * kEntries);
  for (int64_t i = 0; i < kEntries; ++i) {
    const float scaled = FromBf16Bits(static_cast<uint16_t>(i));
    table[i] = RoundToBf16(cap * RoundToBf16(std::tanh(scaled)));
  }
  // The second half, keyed on a bf16 input's own bits: the first half at its scaled value,
  // the same division and rounding the per-element path does.
  for (int64_t i = 0; i < kEntries; ++i) {
    const float in = FromBf16Bits(static_cast<uint16_t>(i));
    table[kEntries + i] = table[Bf16BitsOf(in / cap)];
  }
  return table;
}

}  // namespace

const float* SoftcapBf16Table(float cap) {
  static std::mutex mutex;
  static std::vector<std::pair<uint32_t, std::unique_ptr<float[]>>> tables;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [key, table] : tables) {
    if (key == Bits(cap)) return table.get();
  }
  tables.emplace_back(Bits(cap), MakeTable(cap));
  return tables.back().second.get();
}

namespace {

[[gnu::target("avx512f")]] int64_t SoftcapBf16Avx512(const float* table, const float* x, int64_t n, float cap,
                                                    bool round_input, float* y) {
  const __m512 vcap = _mm512_set1_ps(cap);
  int64_t i = 0;
  if (round_input) {  // one lookup by the rounded input's bits (the table's second half)
    const float* by_input = table + kEntries;
    for (; i + 16 <= n; i += 16) {
      const __m512i index = Bf16Halves(_mm512_loadu_ps(x + i));
      _mm512_storeu_ps(y + i, _mm512_i32gather_ps(index, by_input, 4));
    }
    return i;
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 scaled = _mm512_div_ps(_mm512_loadu_ps(x + i), vcap);
    const __m512i index = Bf16Halves(scaled);
    _mm512_storeu_ps(y + i, _mm512_i32gather_ps(index, table, 4));
  }
  return i;
}

// The same on 8 lanes (AVX2's gather): the index is RoundBf16Bits8's top half.
[[gnu::target("avx2")]] int64_t SoftcapBf16Avx2(const float* table, const float* x, int64_t n, float cap,
                                               bool round_input, float* y) {
  const __m256 vcap = _mm256_set1_ps(cap);
  const float* base = round_input ? table + kEntries : table;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 in = _mm256_loadu_ps(x + i);
    const __m256 key = round_input ? in : _mm256_div_ps(in, vcap);
    const __m256i index = _mm256_srli_epi32(RoundBf16Bits8(_mm256_castps_si256(key)), 16);
    _mm256_storeu_ps(y + i, _mm256_i32gather_ps(base, index, 4));
  }
  return i;
}

const bool kHasAvx512 = CpuIsaAtLeast(CpuIsa::kAvx512);
const bool kHasAvx2 = CpuIsaAtLeast(CpuIsa::kAvx2);

}  // namespace

void SoftcapBf16Range(const float* table, const float* x, int64_t n, float cap, bool round_input, float* y) {
  const int64_t done = kHasAvx512 ? SoftcapBf16Avx512(table, x, n, cap, round_input, y)
                       : kHasAvx2 ? SoftcapBf16Avx2(table, x, n, cap, round_input, y)
                                  : 0;
  for (int64_t i = done; i < n; ++i) {
    y[i] = round_input ? table[kEntries + Bf16BitsOf(x[i])] : table[Bf16BitsOf(x[i] / cap)];
  }
}

void SoftcapBf16(const float* x, float* y, int64_t n, float cap, bool round_input) {
  const float* table = SoftcapBf16Table(cap);
  ParallelFor(n, kChunk, [&](int64_t begin, int64_t end) {
    SoftcapBf16Range(table, x + begin, end - begin, cap, round_input, y + begin);
  });
}

}  // namespace gpt_sft::runtime::kernels
