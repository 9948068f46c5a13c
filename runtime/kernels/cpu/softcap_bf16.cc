// Implements the table-driven bf16 softcap: the tables in a process-wide list under a mutex
// (one per cap; a step has one cap), the per-element division and rounding as the formula
// does them.
#include "runtime/kernels/cpu/softcap_bf16.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kEntries = 1 << 16;
constexpr int64_t kChunk = 1 << 14;

uint32_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

float FromBits(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

std::unique_ptr<float[]> MakeTable(float cap) {
  auto table = std::make_unique<float[]>(kEntries);
  for (int64_t i = 0; i < kEntries; ++i) {
    const float scaled = FromBits(static_cast<uint32_t>(i) << 16);
    table[i] = RoundToBf16(cap * RoundToBf16(std::tanh(scaled)));
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

void SoftcapBf16Range(const float* table, const float* x, int64_t n, float cap, bool round_input, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float in = round_input ? RoundToBf16(x[i]) : x[i];
    y[i] = table[Bits(RoundToBf16(in / cap)) >> 16];
  }
}

void SoftcapBf16(const float* x, float* y, int64_t n, float cap, bool round_input) {
  const float* table = SoftcapBf16Table(cap);
  ParallelFor(n, kChunk, [&](int64_t begin, int64_t end) {
    SoftcapBf16Range(table, x + begin, end - begin, cap, round_input, y + begin);
  });
}

}  // namespace gpt_sft::runtime::kernels
