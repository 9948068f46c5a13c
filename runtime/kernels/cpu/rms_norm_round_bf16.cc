// Implements the rounded norms: RmsNorm's own row kernels, then the row rounded in place.
#include "runtime/kernels/cpu/rms_norm_round_bf16.h"

#include <algorithm>
#include <vector>

#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/round_bf16.h"

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
    thread_local std::vector<float> rounded;  // grown once per thread, not allocated per chunk
    if (static_cast<int64_t>(rounded.size()) < n) rounded.resize(n);
    std::copy(dy + begin * dim, dy + begin * dim + n, rounded.begin());
    RoundBf16InPlace(rounded.data(), n);
    RmsNormGradRows(x + begin * dim, rounded.data(), dx + begin * dim, end - begin, dim, eps);
    if (round_dx) RoundRow(dx + begin * dim, n);
  });
}

}  // namespace gpt_sft::runtime::kernels
