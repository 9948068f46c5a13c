// Implements RoundBf16: a plain loop over chunks on the pool (integer ops the compiler
// vectorises).
#include "runtime/kernels/cpu/round_bf16.h"

#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {

void RoundBf16(const float* x, float* y, int64_t n) {
  constexpr int64_t kChunk = 1 << 15;
  ParallelFor(n, kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = RoundToBf16(x[i]);
  });
}

}  // namespace gpt_sft::runtime::kernels
