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
    for (int64_t r = begin; r < end; ++r) {
      RmsNormRow(x + r * dim, y + r * dim, dim, eps);
      RoundRow(y + r * dim, dim);
    }
  });
}

void RmsNormGradRoundBf16(const float* x, const float* dy, float* dx, int64_t rows, int64_t dim, float eps) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      RmsNormGradRow(x + r * dim, dy + r * dim, dx + r * dim, dim, eps);
      RoundRow(dx + r * dim, dim);
    }
  });
}

void RmsNormGradOfRoundedDy(const float* x, const float* dy, float* dx, int64_t rows, int64_t dim, float eps,
                            bool round_dx) {
  ParallelFor(rows, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    std::vector<float> rounded(dim);
    for (int64_t r = begin; r < end; ++r) {
      std::copy(dy + r * dim, dy + (r + 1) * dim, rounded.begin());
      RoundBf16InPlace(rounded.data(), dim);
      RmsNormGradRow(x + r * dim, rounded.data(), dx + r * dim, dim, eps);
      if (round_dx) RoundRow(dx + r * dim, dim);
    }
  });
}

}  // namespace gpt_sft::runtime::kernels
