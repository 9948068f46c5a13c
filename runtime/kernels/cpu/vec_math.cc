// Implements the row primitives, on AVX-512 where the CPU has it (the AVX2 kernels' very
// operations on 16 lanes, sums added in their order: the same bits), else AVX2. The float exp: x = k ln2 + r with k = round(x log2 e),
// r in [-ln2/2, ln2/2] (ln2 split in two parts for an exact product), exp(r) by a degree-7
// polynomial, times 2^k built in the exponent bits; inputs below -87.3 give 0.
#include "runtime/kernels/cpu/vec_math.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/exp_avx512.h"
#include "runtime/kernels/cpu/vec_math_isa.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

const bool kHasAvx2 = CpuIsaAtLeast(CpuIsa::kAvx2);
const bool kHasAvx512 = CpuIsaAtLeast(CpuIsa::kAvx512);

[[gnu::target("avx2,fma")]] inline __m256 Exp8(__m256 x) {
  const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(-87.33654f), _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.33654f)), _mm256_set1_ps(88.37626f));
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  y = _mm256_mul_ps(y, _mm256_castsi256_ps(bits));
  return _mm256_andnot_ps(underflow, y);
}

// Adds the 8 lanes of v into two double accumulators (exactly: float -> double is exact).
[[gnu::target("avx2,fma")]] inline void AddToDouble(__m256 v, __m256d& lo, __m256d& hi) {
  lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

[[gnu::target("avx2,fma")]] inline double HorizontalSum(__m256d lo, __m256d hi) {
  alignas(32) double t[4];
  _mm256_store_pd(t, _mm256_add_pd(lo, hi));
  return (t[0] + t[1]) + (t[2] + t[3]);
}

[[gnu::target("avx2,fma")]] float MaxOfAvx2(const float* x, int64_t n) {
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + j));
  alignas(32) float t[8];
  _mm256_store_ps(t, m);
  float r = *std::max_element(t, t + 8);
  for (; j < n; ++j) r = std::max(r, x[j]);
  return r;
}

// e = exp(mult * x - shift) for elements [j, n); e * scale into out when out != nullptr; adds
// e into the accumulators lo (lanes 0-3 of each group of 8) and hi (lanes 4-7).
[[gnu::target("avx2,fma")]] void ExpAvx2From(const float* x, int64_t j, int64_t n, float mult, float shift,
                                             float scale, float* out, __m256d& lo, __m256d& hi) {
  const __m256 s = _mm256_set1_ps(shift), sc = _mm256_set1_ps(scale), mu = _mm256_set1_ps(mult);
  for (; j + 8 <= n; j += 8) {
    const __m256 e = Exp8(_mm256_fmsub_ps(_mm256_loadu_ps(x + j), mu, s));
    AddToDouble(e, lo, hi);
    if (out != nullptr) _mm256_storeu_ps(out + j, _mm256_mul_ps(e, sc));
  }
  if (j < n) {  // the tail through the same polynomial, so every element rounds alike
    alignas(32) float t[8];
    std::fill(t, t + 8, -std::numeric_limits<float>::infinity());
    std::copy(x + j, x + n, t);
    const __m256 e = Exp8(_mm256_fmsub_ps(_mm256_load_ps(t), mu, s));
    AddToDouble(e, lo, hi);
    _mm256_store_ps(t, _mm256_mul_ps(e, sc));
    if (out != nullptr) std::copy(t, t + (n - j), out + j);
  }
}

// e = exp(mult * x - shift); e * scale into out when out != nullptr; returns the sum of e.
[[gnu::target("avx2,fma")]] double ExpAvx2(const float* x, int64_t n, float mult, float shift, float scale,
                                           float* out) {
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  ExpAvx2From(x, 0, n, mult, shift, scale, out, lo, hi);
  return HorizontalSum(lo, hi);
}

// Exp16 (exp_avx512.h) is Exp8's operations on 16 lanes: each element's value is Exp8's.

// ExpAvx2 with the exps 16 at a time; the sums added 8 lanes at a time in ExpAvx2's order, so
// the result is ExpAvx2's bit for bit. ExpAvx2's two accumulators lo (lanes 0-3 of each group
// of 8) and hi (lanes 4-7) are the halves of one 8-double register here: converting a group
// of 8 floats to 8 doubles puts each lane where AddToDouble adds it.
[[gnu::target("avx512f,avx2,fma")]] double ExpAvx512(const float* x, int64_t n, float mult, float shift,
                                                     float scale, float* out) {
  const __m512 s = _mm512_set1_ps(shift), sc = _mm512_set1_ps(scale), mu = _mm512_set1_ps(mult);
  __m512d acc = _mm512_setzero_pd();  // [lo | hi]
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 e = Exp16(_mm512_fmsub_ps(_mm512_loadu_ps(x + j), mu, s));
    acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
    if (out != nullptr) _mm512_storeu_ps(out + j, _mm512_mul_ps(e, sc));
  }
  __m256d lo = _mm512_castpd512_pd256(acc), hi = _mm512_extractf64x4_pd(acc, 1);
  ExpAvx2From(x, j, n, mult, shift, scale, out, lo, hi);
  return HorizontalSum(lo, hi);
}

[[gnu::target("avx2,fma")]] inline __m256 Tanh8(__m256 x) {
  const __m256 limit = _mm256_set1_ps(7.90531110763549805f);
  x = _mm256_min_ps(limit, _mm256_max_ps(_mm256_sub_ps(_mm256_setzero_ps(), limit), x));
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-2.76076847742355e-16f);
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(2.00018790482477e-13f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-8.60467152213735e-11f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(5.12229709037114e-08f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(1.48572235717979e-05f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(6.37261928875436e-04f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(4.89352455891786e-03f));
  p = _mm256_mul_ps(p, x);
  __m256 q = _mm256_set1_ps(1.19825839466702e-06f);
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(1.18534705686654e-04f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(2.26843463243900e-03f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(4.89352518554385e-03f));
  return _mm256_div_ps(p, q);
}

[[gnu::target("avx2,fma")]] void TanhAvx2(const float* x, int64_t n, float in_scale, float out_scale, float* out) {
  const __m256 a = _mm256_set1_ps(in_scale), b = _mm256_set1_ps(out_scale);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(out + j, _mm256_mul_ps(b, Tanh8(_mm256_mul_ps(a, _mm256_loadu_ps(x + j)))));
  if (j < n) {  // the tail through the same rational
    alignas(32) float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::copy(x + j, x + n, t);
    _mm256_store_ps(t, _mm256_mul_ps(b, Tanh8(_mm256_mul_ps(a, _mm256_load_ps(t)))));
    std::copy(t, t + (n - j), out + j);
  }
}

// Tanh8's operations on 16 lanes.
[[gnu::target("avx512f")]] inline __m512 Tanh16(__m512 x) {
  const __m512 limit = _mm512_set1_ps(7.90531110763549805f);
  x = _mm512_min_ps(limit, _mm512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), limit), x));
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 p = _mm512_set1_ps(-2.76076847742355e-16f);
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(2.00018790482477e-13f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-8.60467152213735e-11f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(5.12229709037114e-08f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(1.48572235717979e-05f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(6.37261928875436e-04f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(4.89352455891786e-03f));
  p = _mm512_mul_ps(p, x);
  __m512 q = _mm512_set1_ps(1.19825839466702e-06f);
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(1.18534705686654e-04f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(2.26843463243900e-03f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(4.89352518554385e-03f));
  return _mm512_div_ps(p, q);
}

[[gnu::target("avx512f,avx2,fma")]] void TanhAvx512(const float* x, int64_t n, float in_scale, float out_scale,
                                                    float* out) {
  const __m512 a = _mm512_set1_ps(in_scale), b = _mm512_set1_ps(out_scale);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    _mm512_storeu_ps(out + j, _mm512_mul_ps(b, Tanh16(_mm512_mul_ps(a, _mm512_loadu_ps(x + j)))));
  if (j < n) TanhAvx2(x + j, n - j, in_scale, out_scale, out + j);
}

// ScaleSoftcapGrad's element expression; the file is built with -ffp-contract=off, so the
// vector forms below round each operation as this does.
template <typename T>
inline T SoftcapGradElement(T y, T out, T factor, T cap) {
  const T t = y / cap;
  return (out * factor) * (T(1) - t * t);
}

[[gnu::target("avx2,fma")]] void ScaleSoftcapGradAvx2(const float* y, int64_t n, float factor, float cap, float* out) {
  const __m256 f = _mm256_set1_ps(factor), c = _mm256_set1_ps(cap), one = _mm256_set1_ps(1.f);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 t = _mm256_div_ps(_mm256_loadu_ps(y + j), c);
    _mm256_storeu_ps(out + j, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(out + j), f),
                                            _mm256_sub_ps(one, _mm256_mul_ps(t, t))));
  }
  for (; j < n; ++j) out[j] = SoftcapGradElement(y[j], out[j], factor, cap);
}

[[gnu::target("avx512f,avx2,fma")]] void ScaleSoftcapGradAvx512(const float* y, int64_t n, float factor, float cap,
                                                                float* out) {
  const __m512 f = _mm512_set1_ps(factor), c = _mm512_set1_ps(cap), one = _mm512_set1_ps(1.f);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 t = _mm512_div_ps(_mm512_loadu_ps(y + j), c);
    _mm512_storeu_ps(out + j, _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(out + j), f),
                                            _mm512_sub_ps(one, _mm512_mul_ps(t, t))));
  }
  ScaleSoftcapGradAvx2(y + j, n - j, factor, cap, out + j);
}

template <typename T>
double ExpPortable(const T* x, int64_t n, T mult, T shift, T scale, T* out) {
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    const T arg = mult * x[j] - shift;
    // Below log(FLT_MIN) the vector kernels give 0, not a subnormal: the same on every level.
    const T e = std::is_same_v<T, float> && arg < T(-87.33654f) ? T(0) : std::exp(arg);
    sum += e;
    if (out != nullptr) out[j] = scale * e;
  }
  return sum;
}

}  // namespace

namespace vec_math_isa {

bool HasAvx2() { return kHasAvx2; }
bool HasAvx512() { return kHasAvx512; }
double ExpAffineAvx2(const float* x, int64_t n, float mult, float shift, float* out) {
  RequireCpuIsa(CpuIsa::kAvx2, "vec_math_isa::ExpAffineAvx2");
  return ExpAvx2(x, n, mult, shift, 1.f, out);
}
double ExpAffineAvx512(const float* x, int64_t n, float mult, float shift, float* out) {
  RequireCpuIsa(CpuIsa::kAvx512, "vec_math_isa::ExpAffineAvx512");
  return ExpAvx512(x, n, mult, shift, 1.f, out);
}
void ScaledTanhAvx2(const float* x, int64_t n, float in_scale, float out_scale, float* out) {
  RequireCpuIsa(CpuIsa::kAvx2, "vec_math_isa::ScaledTanhAvx2");
  TanhAvx2(x, n, in_scale, out_scale, out);
}
void ScaledTanhAvx512(const float* x, int64_t n, float in_scale, float out_scale, float* out) {
  RequireCpuIsa(CpuIsa::kAvx512, "vec_math_isa::ScaledTanhAvx512");
  TanhAvx512(x, n, in_scale, out_scale, out);
}

void ScaleSoftcapGradAvx2(const float* y, int64_t n, float factor, float cap, float* out) {
  RequireCpuIsa(CpuIsa::kAvx2, "vec_math_isa::ScaleSoftcapGradAvx2");
  ::gpt_sft::runtime::kernels::ScaleSoftcapGradAvx2(y, n, factor, cap, out);
}
void ScaleSoftcapGradAvx512(const float* y, int64_t n, float factor, float cap, float* out) {
  RequireCpuIsa(CpuIsa::kAvx512, "vec_math_isa::ScaleSoftcapGradAvx512");
  ::gpt_sft::runtime::kernels::ScaleSoftcapGradAvx512(y, n, factor, cap, out);
}
void ScaleSoftcapGradScalar(const float* y, int64_t n, float factor, float cap, float* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = SoftcapGradElement(y[j], out[j], factor, cap);
}

}  // namespace vec_math_isa

template <typename T>
double Dot(const T* x, const T* y, int64_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int u = 0; u < 8; ++u) acc[u] += double(x[j + u]) * double(y[j + u]);
  for (; j < n; ++j) acc[0] += double(x[j]) * double(y[j]);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

template <typename T>
double SumOfSquares(const T* x, int64_t n) {
  return Dot(x, x, n);
}

namespace {

/// Dot's final sum of its eight partial sums, in its order.
double SumOfLanes(const double* acc) {
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/// RowSums on four rows: the eight partial sums of each row are one vector's lanes (a product
/// of two floats is exact in double, so the fused multiply-add rounds as Dot's add does),
/// the tail goes to partial sum 0 as in Dot.
[[gnu::target("avx512f")]] void FourRowSumsAvx512(const float* x, const float* y, int64_t ld, int64_t n,
                                                 double* sums_xx, double* dots_yx) {
  __m512d xx[4], yx[4];
  for (int r = 0; r < 4; ++r) xx[r] = yx[r] = _mm512_setzero_pd();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    for (int r = 0; r < 4; ++r) {
      const __m512d xv = _mm512_cvtps_pd(_mm256_loadu_ps(x + r * ld + j));
      xx[r] = _mm512_fmadd_pd(xv, xv, xx[r]);
      if (y != nullptr) yx[r] = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_loadu_ps(y + r * ld + j)), xv, yx[r]);
    }
  }
  for (int r = 0; r < 4; ++r) {
    alignas(64) double acc[8];
    _mm512_store_pd(acc, xx[r]);
    for (int64_t t = j; t < n; ++t) acc[0] += double(x[r * ld + t]) * double(x[r * ld + t]);
    sums_xx[r] = SumOfLanes(acc);
    if (y == nullptr) continue;
    _mm512_store_pd(acc, yx[r]);
    for (int64_t t = j; t < n; ++t) acc[0] += double(y[r * ld + t]) * double(x[r * ld + t]);
    dots_yx[r] = SumOfLanes(acc);
  }
}

}  // namespace

template <typename T>
void RowSums(const T* x, const T* y, int64_t ld, int64_t rows, int64_t n, double* sums_xx, double* dots_yx) {
  int64_t r = 0;
  if constexpr (std::is_same_v<T, float>) {
    if (kHasAvx512) {
      for (; r + 4 <= rows; r += 4) {
        FourRowSumsAvx512(x + r * ld, y == nullptr ? nullptr : y + r * ld, ld, n, sums_xx + r,
                          y == nullptr ? nullptr : dots_yx + r);
      }
    }
  }
  for (; r < rows; ++r) {
    sums_xx[r] = SumOfSquares(x + r * ld, n);
    if (y != nullptr) dots_yx[r] = Dot(y + r * ld, x + r * ld, n);
  }
}

template void RowSums<float>(const float*, const float*, int64_t, int64_t, int64_t, double*, double*);
template void RowSums<double>(const double*, const double*, int64_t, int64_t, int64_t, double*, double*);
template double Dot<float>(const float*, const float*, int64_t);
template double Dot<double>(const double*, const double*, int64_t);
template double SumOfSquares<float>(const float*, int64_t);
template double SumOfSquares<double>(const double*, int64_t);

template <>
float MaxOf<float>(const float* x, int64_t n) {
  if (kHasAvx2) return MaxOfAvx2(x, n);
  return *std::max_element(x, x + n);
}
template <>
double MaxOf<double>(const double* x, int64_t n) {
  return *std::max_element(x, x + n);
}

template <>
double ExpShiftedSum<float>(const float* x, int64_t n, float shift) {
  if (kHasAvx512) return ExpAvx512(x, n, 1.f, shift, 1.f, nullptr);
  if (kHasAvx2) return ExpAvx2(x, n, 1.f, shift, 1.f, nullptr);
  return ExpPortable<float>(x, n, 1.f, shift, 1.f, nullptr);
}
template <>
double ExpShiftedSum<double>(const double* x, int64_t n, double shift) {
  return ExpPortable<double>(x, n, 1.0, shift, 1.0, nullptr);
}

template <>
double ExpShifted<float>(const float* x, int64_t n, float shift, float scale, float* out) {
  if (kHasAvx512) return ExpAvx512(x, n, 1.f, shift, scale, out);
  if (kHasAvx2) return ExpAvx2(x, n, 1.f, shift, scale, out);
  return ExpPortable<float>(x, n, 1.f, shift, scale, out);
}
template <>
double ExpShifted<double>(const double* x, int64_t n, double shift, double scale, double* out) {
  return ExpPortable<double>(x, n, 1.0, shift, scale, out);
}

template <>
void ScaledTanh<float>(const float* x, int64_t n, float in_scale, float out_scale, float* out) {
  if (kHasAvx512) return TanhAvx512(x, n, in_scale, out_scale, out);
  if (kHasAvx2) return TanhAvx2(x, n, in_scale, out_scale, out);
  for (int64_t j = 0; j < n; ++j) out[j] = out_scale * std::tanh(in_scale * x[j]);
}
template <>
void ScaledTanh<double>(const double* x, int64_t n, double in_scale, double out_scale, double* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = out_scale * std::tanh(in_scale * x[j]);
}

template <>
void ScaleSoftcapGrad<float>(const float* y, int64_t n, float factor, float cap, float* out) {
  if (kHasAvx512) return ScaleSoftcapGradAvx512(y, n, factor, cap, out);
  if (kHasAvx2) return ScaleSoftcapGradAvx2(y, n, factor, cap, out);
  for (int64_t j = 0; j < n; ++j) out[j] = SoftcapGradElement(y[j], out[j], factor, cap);
}
template <>
void ScaleSoftcapGrad<double>(const double* y, int64_t n, double factor, double cap, double* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = SoftcapGradElement(y[j], out[j], factor, cap);
}

template <>
double ExpAffine<float>(const float* x, int64_t n, float mult, float shift, float* out) {
  if (kHasAvx512) return ExpAvx512(x, n, mult, shift, 1.f, out);
  if (kHasAvx2) return ExpAvx2(x, n, mult, shift, 1.f, out);
  return ExpPortable<float>(x, n, mult, shift, 1.f, out);
}
template <>
double ExpAffine<double>(const double* x, int64_t n, double mult, double shift, double* out) {
  return ExpPortable<double>(x, n, mult, shift, 1.0, out);
}

}  // namespace gpt_sft::runtime::kernels
