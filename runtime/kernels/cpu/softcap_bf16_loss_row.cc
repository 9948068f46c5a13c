// Implements the fused bf16 loss row. Built with -ffp-contract=off: each vector operation
// rounds as the chain's scalar and vector forms do (no multiply-subtract fused).
#include "runtime/kernels/cpu/softcap_bf16_loss_row.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/round_bf16_avx512.h"
#include "runtime/kernels/cpu/softcap_bf16.h"
#include "runtime/kernels/cpu/vec_math.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

[[gnu::target("avx512f,avx512bw,avx512bf16,avx2")]] float SoftcapWithMaxAvx512(const float* table, float* x,
                                                                               int64_t V) {
  const float* by_input = table + kSoftcapBf16TableHalf;
  // MaxOf's AVX2 order: one 8-lane running max over the elements 8 at a time, then its lanes.
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t j = 0;
  for (; j + 16 <= V; j += 16) {
    const __m512i index = Bf16Halves(_mm512_loadu_ps(x + j));
    const __m512 y = _mm512_i32gather_ps(index, by_input, 4);
    _mm512_storeu_ps(x + j, y);
    m = _mm256_max_ps(m, _mm512_castps512_ps256(y));
    m = _mm256_max_ps(m, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(y), 1)));
  }
  for (; j < V; ++j) x[j] = by_input[Bf16BitsOf(x[j])];
  if (V - (V / 16) * 16 >= 8) {  // MaxOf's last full group of 8
    m = _mm256_max_ps(m, _mm256_loadu_ps(x + (V / 16) * 16));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m);
  float r = *std::max_element(lanes, lanes + 8);
  for (int64_t k = (V / 8) * 8; k < V; ++k) r = std::max(r, x[k]);
  return r;
}

/// One element's gradient as the chain computes it: bf16(e * factor) * (1 - t * t), t = y / cap
/// (ScaleSoftcapGrad's expression with factor 1: out * 1 is out).
inline float GradElement(float e, float factor, float y, float cap) {
  const float t = y / cap;
  return RoundToBf16(e * factor) * (1.0f - t * t);
}

[[gnu::target("avx512f,avx512bw,avx512bf16")]] inline __m512 GradElements16(const float* exps, const float* y,
                                                                           __m512 factor, __m512 cap) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 scaled = _mm512_mul_ps(_mm512_loadu_ps(exps), factor);
  const __m512 rounded = RoundBf16Lanes(scaled);
  const __m512 t = _mm512_div_ps(_mm512_loadu_ps(y), cap);
  return _mm512_mul_ps(rounded, _mm512_sub_ps(one, _mm512_mul_ps(t, t)));
}

[[gnu::target("avx512f,avx512bw,avx512bf16")]] void NarrowedGradAvx512(const float* exps, const float* y, int64_t V,
                                                                      float factor, float cap, uint16_t* dy) {
  const __m512 f = _mm512_set1_ps(factor), c = _mm512_set1_ps(cap);
  int64_t j = 0;
  for (; j + 32 <= V; j += 32) {
    const __m512 lo = GradElements16(exps + j, y + j, f, c);
    const __m512 hi = GradElements16(exps + j + 16, y + j + 16, f, c);
    _mm512_storeu_si512(dy + j, NarrowBf16x32(lo, hi));
  }
  for (; j < V; ++j) dy[j] = Bf16BitsOf(GradElement(exps[j], factor, y[j], cap));
}

}  // namespace

bool SoftcapBf16LossRowFused() {
  return CpuIsaAtLeast(CpuIsa::kAvx512Bf16);  // the level includes AVX2
}

float SoftcapBf16InPlaceWithMax(const float* table, float* x, int64_t V) {
  RequireCpuIsa(CpuIsa::kAvx512Bf16, "SoftcapBf16InPlaceWithMax");
  return SoftcapWithMaxAvx512(table, x, V);
}

double SoftcapBf16RowLossAndNarrowedGrad(const float* y, float m, int32_t target, int64_t V, double scale, float cap,
                                         float* exps, uint16_t* dy) {
  RequireCpuIsa(CpuIsa::kAvx512Bf16, "SoftcapBf16RowLossAndNarrowedGrad");
  const double sum = ExpShifted(y, V, m, 1.0f, exps);
  const float factor = float(scale / sum);
  const float at_target = exps[target] * factor - float(scale);
  NarrowedGradAvx512(exps, y, V, factor, cap, dy);
  const float t = y[target] / cap;
  dy[target] = Bf16BitsOf(RoundToBf16(at_target) * (1.0f - t * t));
  return double(m) + std::log(sum) - double(y[target]);
}

}  // namespace gpt_sft::runtime::kernels
