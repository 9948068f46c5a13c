// Implements the row steps. The AVX-512 loops handle the last n % 16 elements under a lane
// mask, so there is no scalar tail to keep in step with the vector body.
#include "runtime/kernels/cpu/attention_rows.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "base/cpu_isa.h"
#include "model/round_to_bf16.h"
#include "runtime/kernels/cpu/exp_avx512.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/round_bf16_avx512.h"
#include "runtime/kernels/cpu/vec_math.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

const bool kHasAvx512 = CpuIsaAtLeast(CpuIsa::kAvx512);

// Lanes [0, min(16, n - j)) of a 16-lane block starting at j.
[[gnu::target("avx512f"), gnu::always_inline]] inline __mmask16 Lanes(int64_t j, int64_t n) {
  return n - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - j)) - 1);
}

[[gnu::target("avx512f")]] void MaskAvx512(float* s, int64_t n, int64_t visible_end, const int32_t* key_ids,
                                           int32_t query_id) {
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i qid = _mm512_set1_epi32(query_id);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 live = Lanes(j, n);
    // j + lane >= visible_end, as lane >= visible_end - j clamped to [0, 16].
    const int64_t first = visible_end - j;
    const __m512i limit = _mm512_set1_epi32(int32_t(first < 0 ? 0 : first > 16 ? 16 : first));
    __mmask16 hide = _mm512_cmpge_epi32_mask(lane, limit);
    if (key_ids != nullptr)
      hide |= _mm512_mask_cmpneq_epi32_mask(live, _mm512_maskz_loadu_epi32(live, key_ids + j), qid);
    _mm512_mask_storeu_ps(s + j, hide & live, neg_inf);
  }
}

[[gnu::target("avx512f")]] void ScaleAvx512(float* x, int64_t n, float factor) {
  const __m512 f = _mm512_set1_ps(factor);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = Lanes(j, n);
    _mm512_mask_storeu_ps(x + j, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + j), f));
  }
}

[[gnu::target("avx512f")]] void DivideAvx512(const float* acc, int64_t n, double divisor, float* out) {
  const __m512d d = _mm512_set1_pd(divisor);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = Lanes(j, n);
    const __m512 a = _mm512_maskz_loadu_ps(m, acc + j);
    const __m256 lo = _mm256_castpd_ps(_mm512_castpd512_pd256(_mm512_castps_pd(a)));
    const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1));
    const __m256 qlo = _mm512_cvtpd_ps(_mm512_div_pd(_mm512_cvtps_pd(lo), d));
    const __m256 qhi = _mm512_cvtpd_ps(_mm512_div_pd(_mm512_cvtps_pd(hi), d));
    const __m512d q = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(qlo)), _mm256_castps_pd(qhi), 1);
    _mm512_mask_storeu_ps(out + j, m, _mm512_castpd_ps(q));
  }
}

[[gnu::target("avx512f")]] void ScoreGradAvx512(const float* p, const float* dp, int64_t n, float delta, float scale,
                                                float* ds) {
  const __m512 dl = _mm512_set1_ps(delta), sc = _mm512_set1_ps(scale);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = Lanes(j, n);
    const __m512 diff = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, dp + j), dl);
    _mm512_mask_storeu_ps(ds + j, m, _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, p + j), diff), sc));
  }
}

[[gnu::target("avx512f")]] void RoundBf16Avx512(float* x, int64_t n) {
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = Lanes(j, n);
    _mm512_mask_storeu_ps(x + j, m, RoundBf16Lanes(_mm512_maskz_loadu_ps(m, x + j)));
  }
}

// --- the fused bf16 steps ---------------------------------------------------------------------

// MaxOf's order (vec_math.cc's AVX2 kernel): a running 8-lane max over the whole groups of 8
// (max(m, x): m where m > x, else x), the first largest of its lanes, then the scalar tail.
[[gnu::target("avx512f,avx2"), gnu::always_inline]] inline float ScaleAndMaxAvx512(float* x, int64_t n, float scale) {
  const __m512 f = _mm512_set1_ps(scale);
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t j = 0;
  for (; j < n; j += 16) {
    const __mmask16 live = Lanes(j, n);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(live, x + j), f);
    _mm512_mask_storeu_ps(x + j, live, v);
    if (n - j < 8) break;
    m = _mm256_max_ps(m, _mm512_castps512_ps256(v));
    if (n - j < 16) {
      j += 8;
      break;
    }
    m = _mm256_max_ps(m, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  }
  alignas(32) float t[8];
  _mm256_store_ps(t, m);
  float r = *std::max_element(t, t + 8);
  for (; j < n; ++j) r = std::max(r, x[j]);
  return r;
}

// ExpAffine's sum (vec_math.cc's ExpAvx512, the tail padded with -inf, whose exp 0 adds
// nothing): 8 double lanes [lo | hi], each group of 8 exps added in turn, then (lo + hi)
// summed as (t0 + t1) + (t2 + t3).
struct ExpSum {
  __m512d acc;
  [[gnu::target("avx512f"), gnu::always_inline]] void Add(__m512 e) {
    acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
  }
  [[gnu::target("avx512f"), gnu::always_inline]] double Total() const {
    alignas(64) double t[8];
    _mm512_store_pd(t, acc);
    return ((t[0] + t[4]) + (t[1] + t[5])) + ((t[2] + t[6]) + (t[3] + t[7]));
  }
};

// The rows' values past n, as ExpAffine's tail pads them: -inf (exp 0).
[[gnu::target("avx512f"), gnu::always_inline]] inline __m512 LoadOrMinusInf(const float* x, __mmask16 live) {
  return _mm512_mask_loadu_ps(_mm512_set1_ps(-std::numeric_limits<float>::infinity()), live, x);
}

// With `bf16`, the rounded values' top halves also go there.
[[gnu::target("avx512f,avx2,fma"), gnu::always_inline]] inline double ExpRoundAvx512(float* x, int64_t n,
                                                                                              float shift,
                                                                                              uint16_t* bf16) {
  const __m512 s = _mm512_set1_ps(shift), one = _mm512_set1_ps(1.f);
  ExpSum sum{_mm512_setzero_pd()};
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 live = Lanes(j, n);
    const __m512 e = Exp16(_mm512_fmsub_ps(LoadOrMinusInf(x + j, live), one, s));
    sum.Add(e);
    const __m512 rounded = RoundBf16Lanes(e);
    _mm512_mask_storeu_ps(x + j, live, rounded);
    if (bf16 != nullptr)
      _mm512_mask_cvtepi32_storeu_epi16(bf16 + j, live, _mm512_srli_epi32(_mm512_castps_si512(rounded), 16));
  }
  return sum.Total();
}

[[gnu::target("avx512f,avx2,fma"), gnu::always_inline]] inline void ScaledExpAvx512(float* x, int64_t n, float scale,
                                                                                    float shift) {
  const __m512 f = _mm512_set1_ps(scale), s = _mm512_set1_ps(shift), one = _mm512_set1_ps(1.f);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 live = Lanes(j, n);
    const __m512 scaled = _mm512_mul_ps(_mm512_maskz_loadu_ps(live, x + j), f);
    _mm512_mask_storeu_ps(x + j, live, Exp16(_mm512_fmsub_ps(scaled, one, s)));
  }
}

// ScoreGradRow's scale 1 leaves its product as it is, so it is not multiplied.
[[gnu::target("avx512f"), gnu::always_inline]] inline void ScoreGradRoundAvx512(float* p, const float* dp, int64_t n,
                                                                               float delta, float* ds) {
  const __m512 dl = _mm512_set1_ps(delta);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = Lanes(j, n);
    const __m512 pv = _mm512_maskz_loadu_ps(m, p + j);
    const __m512 grad = _mm512_mul_ps(pv, _mm512_sub_ps(_mm512_maskz_loadu_ps(m, dp + j), dl));
    _mm512_mask_storeu_ps(ds + j, m, RoundBf16Lanes(grad));
    _mm512_mask_storeu_ps(p + j, m, RoundBf16Lanes(pv));
  }
}

// The row loops of the fused steps: one function each, so the constants above are set up
// once per tile rather than once per row.
[[gnu::target("avx512f,avx2")]] void ScaleRowsAndMaxAvx512(float* x, int64_t rows, int64_t n, float scale,
                                                            float* maxes) {
  for (int64_t r = 0; r < rows; ++r) maxes[r] = ScaleAndMaxAvx512(x + r * n, n, scale);
}

[[gnu::target("avx512f,avx2,fma")]] void ExpRowsRoundAvx512(float* x, int64_t rows, int64_t n,
                                                                     const float* shifts, double* sums,
                                                                     uint16_t* bf16, int64_t bf16_ld) {
  for (int64_t r = 0; r < rows; ++r) {
    uint16_t* const bf16_row = bf16 == nullptr ? nullptr : bf16 + r * bf16_ld;
    if (shifts[r] == -std::numeric_limits<float>::infinity()) {
      sums[r] = 0;
      if (bf16_row != nullptr) std::fill(bf16_row, bf16_row + n, uint16_t(0));
      continue;
    }
    sums[r] = ExpRoundAvx512(x + r * n, n, shifts[r], bf16_row);
  }
}

[[gnu::target("avx512f,avx2,fma")]] void ScaledExpRowsAvx512(float* x, int64_t rows, int64_t n, float scale,
                                                             const float* shifts) {
  for (int64_t r = 0; r < rows; ++r) ScaledExpAvx512(x + r * n, n, scale, shifts[r]);
}

[[gnu::target("avx512f")]] void ScoreGradRowsRoundAvx512(float* p, const float* dp, int64_t rows, int64_t n,
                                                         const float* deltas, float* ds) {
  for (int64_t r = 0; r < rows; ++r) ScoreGradRoundAvx512(p + r * n, dp + r * n, n, deltas[r], ds + r * n);
}

// r[i] holds row i of an 8 x 8 block of floats; afterwards r[c] holds its column c.
[[gnu::target("avx2"), gnu::always_inline]] inline void Transpose8x8(__m256 r[8]) {
  __m256 t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  __m256 u[8];
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xee);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
  }
  for (int c = 0; c < 4; ++c) {
    r[c] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x20);
    r[c + 4] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x31);
  }
}

// Rows r0 .. r0 + 7: 16 columns at a time, rounded, transposed so that lane r holds row r's
// column d, then added into lane r in order of d; the columns past the last 16 one by one.
// A product of two floats is exact in double, so it is the same fused or not.
[[gnu::target("avx512f,avx2")]] void RoundedRowDots8(const float* out, const float* dout, int64_t n, double* dots) {
  __m512d acc = _mm512_setzero_pd();
  int64_t d = 0;
  for (; d + 16 <= n; d += 16) {
    __m256 o[2][8], g[2][8];
    for (int r = 0; r < 8; ++r) {
      const __m512 rounded = RoundBf16Lanes(_mm512_loadu_ps(out + r * n + d));
      const __m512 grad = _mm512_loadu_ps(dout + r * n + d);
      o[0][r] = _mm512_castps512_ps256(rounded);
      o[1][r] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(rounded), 1));
      g[0][r] = _mm512_castps512_ps256(grad);
      g[1][r] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(grad), 1));
    }
    for (int half = 0; half < 2; ++half) {
      Transpose8x8(o[half]);
      Transpose8x8(g[half]);
      for (int c = 0; c < 8; ++c)
        acc = _mm512_add_pd(acc, _mm512_mul_pd(_mm512_cvtps_pd(g[half][c]), _mm512_cvtps_pd(o[half][c])));
    }
  }
  _mm512_storeu_pd(dots, acc);
  for (int r = 0; r < 8; ++r)
    for (int64_t j = d; j < n; ++j) dots[r] += double(dout[r * n + j]) * compiler::RoundToBf16(out[r * n + j]);
}

// The fused steps' vector loops run where vec_math's kernels are its AVX-512 ones.
const bool kFusedAvx512 = kHasAvx512;  // the avx512 level includes AVX2 and FMA

bool Fused(RowPath path) { return path == RowPath::kAuto && kFusedAvx512; }

template <typename T>
bool Vector(RowPath path) {
  return std::is_same_v<T, float> && path == RowPath::kAuto && kHasAvx512;
}

}  // namespace

bool AttentionRowsUseAvx512() { return kHasAvx512; }

template <typename T>
void MaskRow(T* s, int64_t n, int64_t visible_end, const int32_t* key_ids, int32_t query_id, RowPath path) {
  if constexpr (std::is_same_v<T, float>)
    if (Vector<T>(path)) return MaskAvx512(s, n, visible_end, key_ids, query_id);
  const T neg_inf = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j)
    if (j >= visible_end || (key_ids != nullptr && key_ids[j] != query_id)) s[j] = neg_inf;
}

template <typename T>
void ScaleRow(T* x, int64_t n, T factor, RowPath path) {
  if constexpr (std::is_same_v<T, float>)
    if (Vector<T>(path)) return ScaleAvx512(x, n, factor);
  for (int64_t j = 0; j < n; ++j) x[j] *= factor;
}

template <typename T>
void DivideRow(const T* acc, int64_t n, double divisor, T* out, RowPath path) {
  if constexpr (std::is_same_v<T, float>)
    if (Vector<T>(path)) return DivideAvx512(acc, n, divisor, out);
  for (int64_t j = 0; j < n; ++j) out[j] = T(acc[j] / divisor);
}

template <typename T>
void RoundRowToBf16(T* x, int64_t n, RowPath path) {
  if constexpr (std::is_same_v<T, float>) {
    if (Vector<T>(path)) return RoundBf16Avx512(x, n);
    if (path == RowPath::kAuto) return RoundBf16InPlace(x, n);  // AVX2 where the level has it
    for (int64_t j = 0; j < n; ++j) x[j] = compiler::RoundToBf16(x[j]);
  }
}

template <typename T>
void ScoreGradRow(const T* p, const T* dp, int64_t n, T delta, T scale, T* ds, RowPath path) {
  if constexpr (std::is_same_v<T, float>)
    if (Vector<T>(path)) return ScoreGradAvx512(p, dp, n, delta, scale, ds);
  for (int64_t j = 0; j < n; ++j) ds[j] = p[j] * (dp[j] - delta) * scale;
}

void ScaleRowsAndMax(float* x, int64_t rows, int64_t n, float scale, float* maxes, RowPath path) {
  if (Fused(path)) return ScaleRowsAndMaxAvx512(x, rows, n, scale, maxes);
  for (int64_t r = 0; r < rows; ++r) {
    ScaleRow(x + r * n, n, scale, path);
    maxes[r] = MaxOf(x + r * n, n);
  }
}

void ExpRowsRoundedToBf16(float* x, int64_t rows, int64_t n, const float* shifts, double* sums, uint16_t* bf16,
                          int64_t bf16_ld, RowPath path) {
  if (Fused(path)) return ExpRowsRoundAvx512(x, rows, n, shifts, sums, bf16, bf16_ld);
  for (int64_t r = 0; r < rows; ++r) {
    float* const row = x + r * n;
    sums[r] = 0;
    if (shifts[r] != -std::numeric_limits<float>::infinity()) {
      sums[r] = ExpAffine(row, n, 1.f, shifts[r], row);
      RoundRowToBf16(row, n, path);
    }
    if (bf16 == nullptr) continue;
    for (int64_t j = 0; j < n; ++j) {
      uint32_t bits;
      std::memcpy(&bits, &row[j], sizeof bits);
      bf16[r * bf16_ld + j] = shifts[r] == -std::numeric_limits<float>::infinity() ? 0 : uint16_t(bits >> 16);
    }
  }
}

void ScaledExpRows(float* x, int64_t rows, int64_t n, float scale, const float* shifts, RowPath path) {
  if (Fused(path)) return ScaledExpRowsAvx512(x, rows, n, scale, shifts);
  for (int64_t r = 0; r < rows; ++r) {
    ScaleRow(x + r * n, n, scale, path);
    ExpAffine(x + r * n, n, 1.f, shifts[r], x + r * n);
  }
}

void ScoreGradRowsRoundedToBf16(float* p, const float* dp, int64_t rows, int64_t n, const float* deltas, float* ds,
                                RowPath path) {
  if (Fused(path)) return ScoreGradRowsRoundAvx512(p, dp, rows, n, deltas, ds);
  for (int64_t r = 0; r < rows; ++r) {
    ScoreGradRow(p + r * n, dp + r * n, n, deltas[r], 1.f, ds + r * n, path);
    RoundRowToBf16(ds + r * n, n, path);
    RoundRowToBf16(p + r * n, n, path);
  }
}

void RoundedRowDots(const float* out, const float* dout, int64_t rows, int64_t n, double* dots, RowPath path) {
  int64_t r = 0;
  if (Vector<float>(path))
    for (; r + 8 <= rows; r += 8) RoundedRowDots8(out + r * n, dout + r * n, n, dots + r);
  for (; r < rows; ++r) {
    double dot = 0;
    for (int64_t j = 0; j < n; ++j) dot += double(dout[r * n + j]) * compiler::RoundToBf16(out[r * n + j]);
    dots[r] = dot;
  }
}

#define INSTANTIATE(T)                                                                 \
  template void MaskRow<T>(T*, int64_t, int64_t, const int32_t*, int32_t, RowPath);    \
  template void ScaleRow<T>(T*, int64_t, T, RowPath);                                  \
  template void DivideRow<T>(const T*, int64_t, double, T*, RowPath);                  \
  template void RoundRowToBf16<T>(T*, int64_t, RowPath);                               \
  template void ScoreGradRow<T>(const T*, const T*, int64_t, T, T, T*, RowPath);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

}  // namespace gpt_sft::runtime::kernels
