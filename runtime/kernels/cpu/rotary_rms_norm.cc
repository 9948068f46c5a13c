// Implements the fused QK-norm kernels (f32/f64 and under bf16 autocast), one head row at a
// time, parallel over tokens like the rotary kernel.
#include "runtime/kernels/cpu/rotary_rms_norm.h"

#include <algorithm>

#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/thread_scratch.h"

namespace gpt_sft::runtime::kernels {
namespace {

/// Calls row(o, at) for every head row, parallel over tokens like the rotary kernel: o the
/// row's first element, at the first entry of its token's position in the [P, D/2] tables.
template <typename Row>
void ForEachHeadRow(RotaryShape s, const int32_t* positions, const Row& row) {
  const int64_t half = s.D / 2;
  ParallelFor(s.B * s.T, 64, [&](int64_t begin, int64_t end) {
    for (int64_t bt = begin; bt < end; ++bt) {
      const int64_t at = int64_t(positions[bt]) * half;
      for (int64_t h = 0; h < s.H; ++h) row((bt * s.H + h) * s.D, at);
    }
  });
}

}  // namespace

template <typename T>
void RotaryRmsNorm(const T* x, const int32_t* positions, const float* cos, const float* sin, T* rot, T* y,
                   RotaryShape s, T eps) {
  ForEachHeadRow(s, positions, [&](int64_t o, int64_t at) {
    RotateRowFromTables(x + o, rot + o, s.D, cos + at, sin + at, /*grad=*/false);
    RmsNormRow(rot + o, y + o, s.D, eps);
  });
}

void RotaryRmsNormRoundBf16(const float* x, const int32_t* positions, const float* cos, const float* sin, float* rot,
                            float* y, RotaryShape s, float eps) {
  ForEachHeadRow(s, positions, [&](int64_t o, int64_t at) {
    RotateRowFromTablesBf16(x + o, rot + o, s.D, cos + at, sin + at, /*grad=*/false);
    RmsNormRow(rot + o, y + o, s.D, eps);
    RoundBf16InPlace(y + o, s.D);
  });
}

void RmsNormRotaryGradOfRoundedDyBf16(const float* rot, const float* dy, const int32_t* positions, const float* cos,
                                      const float* sin, float* dx, RotaryShape s, float eps) {
  ForEachHeadRow(s, positions, [&](int64_t o, int64_t at) {
    static ThreadScratch scratch;
    float* const rounded = scratch.Get<float>(s.D);
    std::copy(dy + o, dy + o + s.D, rounded);  // dx may be dy's bytes: the row is read first
    RoundBf16InPlace(rounded, s.D);
    RmsNormGradRow(rot + o, rounded, dx + o, s.D, eps);
    RoundBf16InPlace(dx + o, s.D);
    RotateRowFromTablesBf16(dx + o, dx + o, s.D, cos + at, sin + at, /*grad=*/true);
  });
}

template <typename T>
void RmsNormRotaryGrad(const T* rot, const T* dy, const int32_t* positions, const float* cos, const float* sin, T* dx,
                       RotaryShape s, T eps) {
  ForEachHeadRow(s, positions, [&](int64_t o, int64_t at) {
    RmsNormGradRow(rot + o, dy + o, dx + o, s.D, eps);  // rms_norm_grad's result, in dx's row
    RotateRowFromTables(dx + o, dx + o, s.D, cos + at, sin + at, /*grad=*/true);
  });
}

template void RotaryRmsNorm<float>(const float*, const int32_t*, const float*, const float*, float*, float*,
                                   RotaryShape, float);
template void RotaryRmsNorm<double>(const double*, const int32_t*, const float*, const float*, double*, double*,
                                    RotaryShape, double);
template void RmsNormRotaryGrad<float>(const float*, const float*, const int32_t*, const float*, const float*, float*,
                                       RotaryShape, float);
template void RmsNormRotaryGrad<double>(const double*, const double*, const int32_t*, const float*, const float*,
                                        double*, RotaryShape, double);

}  // namespace gpt_sft::runtime::kernels
