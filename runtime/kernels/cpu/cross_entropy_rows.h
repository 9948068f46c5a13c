// The per-row arithmetic of the cross-entropy kernels (cross_entropy.cc) and of the fused
// lm_head loss (linear_cross_entropy.cc), in one place so the fused kernel computes the same
// bits as the unfused ones: a row's loss term, its gradient, and the softcap's gradient
// carried through it (under bf16 autocast, through the rounding of the cotangent too).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_CROSS_ENTROPY_ROWS_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_CROSS_ENTROPY_ROWS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/vec_math.h"

namespace gpt_sft::runtime::kernels::cross_entropy_rows {

/// Rows per chunk of the loss's partial sums: the loss is summed per chunk, then the chunk
/// sums in order, so it does not depend on the thread count.
inline constexpr int64_t kRowsPerChunk = 16;

inline int64_t Chunks(int64_t N) { return (N + kRowsPerChunk - 1) / kRowsPerChunk; }

inline int64_t CountTargets(const int32_t* targets, int64_t N) {
  int64_t count = 0;
  for (int64_t n = 0; n < N; ++n) count += targets[n] >= 0;
  return count;
}

/// -log softmax(row)[target] = m + log sum exp(row - m) - row[target], m the row max; the
/// caller skips ignored rows (target < 0).
template <typename T>
double LossTerm(const T* row, int32_t target, int64_t V) {
  const T m = MaxOf(row, V);
  return double(m) + std::log(ExpShiftedSum(row, V, m)) - double(row[target]);
}

/// One row's gradient: softmax(row) * scale, minus scale at the target; zero for an
/// ignored row. softmax * scale = exp(x - m) * (scale / sum exp(x - m)), m the row max.
template <typename T>
void RowGrad(const T* row, int32_t target, int64_t V, double scale, T* out) {
  if (target < 0) {
    std::fill(out, out + V, T(0));
    return;
  }
  const T m = MaxOf(row, V);
  const T factor = T(scale / ExpShifted(row, V, m, T(1), out));
  for (int64_t v = 0; v < V; ++v) out[v] *= factor;
  out[target] -= T(scale);
}

/// SoftcapGrad's arithmetic on a row of gradients already in `out`, while the row is in cache.
/// (out * 1 is out: ScaleSoftcapGrad with factor 1 is this expression exactly.)
template <typename T>
void SoftcapGradInPlace(const T* row, T cap, int64_t V, T* out) {
  ScaleSoftcapGrad(row, V, T(1), cap, out);
}

/// For a counted row (target >= 0) of softcapped logits `y`: its LossTerm (returned) and its
/// gradient carried through the softcap into `out` (RowGrad's steps, then SoftcapGrad's, per
/// element, in one pass after the exps), from one max and one pass of exps: ExpShiftedSum and
/// ExpShifted add the same exps in the same order, so both results are the separate
/// functions' bits. `out` must not share bytes with `y`.
template <typename T>
double SoftcapRowLossAndGrad(const T* y, int32_t target, int64_t V, double scale, T cap, T* out) {
  const T m = MaxOf(y, V);
  const double sum = ExpShifted(y, V, m, T(1), out);
  // out = (e * factor [- scale at the target]) * (1 - (y / cap)^2).
  const T factor = T(scale / sum);
  const T at_target = out[target] * factor - T(scale);
  ScaleSoftcapGrad(y, V, factor, cap, out);
  const T t = y[target] / cap;
  out[target] = at_target * (T(1) - t * t);
  return double(m) + std::log(sum) - double(y[target]);
}

/// The cross-entropy gradient of softcapped logits `y` (one row) carried through the softcap;
/// zero times the softcap's factor for an ignored row. `out` must not share bytes with `y`.
template <typename T>
void SoftcapRowGrad(const T* y, int32_t target, int64_t V, double scale, T cap, T* out) {
  if (target < 0) {
    RowGrad(y, target, V, scale, out);
    SoftcapGradInPlace(y, cap, V, out);
    return;
  }
  SoftcapRowLossAndGrad(y, target, V, scale, cap, out);
}

/// SoftcapRowLossAndGrad under bf16 autocast (f32 only): the loss's cotangent is rounded to
/// bf16 before the softcap's factor, out = bf16(e * factor [- scale at the target]) *
/// (1 - (y / cap)^2), SoftcapGrad(y, RoundBf16(RowGrad(y))) bit for bit, in three
/// vectorizable passes over the row in cache. Returns the row's LossTerm.
inline double SoftcapBf16RowLossAndGrad(const float* y, int32_t target, int64_t V, double scale, float cap,
                                        float* out) {
  const float m = MaxOf(y, V);
  const double sum = ExpShifted(y, V, m, 1.0f, out);
  const float factor = float(scale / sum);
  const float at_target = out[target] * factor - float(scale);
  for (int64_t v = 0; v < V; ++v) out[v] = out[v] * factor;
  RoundBf16InPlace(out, V);
  SoftcapGradInPlace(y, cap, V, out);
  const float t = y[target] / cap;
  out[target] = RoundToBf16(at_target) * (1.0f - t * t);
  return double(m) + std::log(sum) - double(y[target]);
}

/// SoftcapRowGrad under bf16 autocast (SoftcapBf16RowLossAndGrad's gradient; for an ignored
/// row zeros, which the rounding keeps, times the softcap's factor).
inline void SoftcapBf16RowGrad(const float* y, int32_t target, int64_t V, double scale, float cap, float* out) {
  if (target < 0) {
    RowGrad(y, target, V, scale, out);
    SoftcapGradInPlace(y, cap, V, out);
    return;
  }
  SoftcapBf16RowLossAndGrad(y, target, V, scale, cap, out);
}

}  // namespace gpt_sft::runtime::kernels::cross_entropy_rows

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_CROSS_ENTROPY_ROWS_H_
