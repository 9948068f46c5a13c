// Implements the rounded norms: RmsNorm's own row kernels, then the row rounded in place.
#include "runtime/kernels/cpu/rms_norm_round_bf16.h"

#include <algorithm>

#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/thread_scratch.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kRowsPerChunk = 64;

void RoundRow(float* row, int64_t dim) { RoundBf16InPlace(row, dim); }

}  // namespace

void RmsNormRoundBf16(const float* x, float* y, int64_t rows, int64_t dim, float eps) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    RmsNormRows(x + begin * dim, y + begin * dim, end - begin, dim, eps);
    RoundRow(y + begin * dim, (end - begin) * dim);
  });
}

void RmsNormGradRoundBf16(const float* x, const float* dy, float* dx, int64_t rows, int64_t dim, float eps) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    RmsNormGradRows(x + begin * dim, dy + begin * dim, dx + begin * dim, end - begin, dim, eps);
    RoundRow(dx + begin * dim, (end - begin) * dim);
  });
}

void RmsNormGradOfRoundedDy(const float* x, const float* dy, float* dx, int64_t rows, int64_t dim, float eps,
                            bool round_dx) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    const int64_t n = (end - begin) * dim;
    static ThreadScratch scratch;
    float* const rounded = scratch.Get<float>(n);
    std::copy(dy + begin * dim, dy + begin * dim + n, rounded);
    RoundBf16InPlace(rounded, n);
    RmsNormGradRows(x + begin * dim, rounded, dx + begin * dim, end - begin, dim, eps);
    if (round_dx) RoundRow(dx + begin * dim, n);
  });
}

}  // namespace gpt_sft::runtime::kernels
