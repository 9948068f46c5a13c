// Row primitives of the softmax-shaped kernels (attention, cross entropy): max, and
// exp(x - shift) with its sum. For float on AVX2 CPUs exp is a vectorised Cephes-style
// polynomial (relative error ~2e-7, exp(x) == 0 exactly for x < -87.3, so a -inf mask
// gives 0); double, and CPUs without AVX2, use std::exp. Sums are accumulated in double.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_VEC_MATH_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_VEC_MATH_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

/// sum_j x[j]^2 and sum_j x[j] y[j] in double, with eight independent partial sums (fixed
/// order, so the result does not depend on alignment or threads).
template <typename T> double SumOfSquares(const T* x, int64_t n);
template <typename T> double Dot(const T* x, const T* y, int64_t n);

/// SumOfSquares of each of `rows` rows of n elements (row r at x + r * ld) into sums_xx[r]
/// and, where y is given, Dot(y's row r, x's row r) (y's rows at the same stride) into
/// dots_yx[r]: each sum in exactly those functions' order, so the same bits. One row's sum
/// is a chain of dependent adds that leaves the vector units idle; on AVX-512 four rows run
/// side by side.
template <typename T>
void RowSums(const T* x, const T* y, int64_t ld, int64_t rows, int64_t n, double* sums_xx, double* dots_yx);

/// max over x[0, n), n >= 1; -inf entries are fine.
template <typename T> T MaxOf(const T* x, int64_t n);

/// sum_j exp(x[j] - shift).
template <typename T> double ExpShiftedSum(const T* x, int64_t n, T shift);

/// out[j] = scale * exp(x[j] - shift) (out may be x); returns sum_j exp(x[j] - shift).
template <typename T> double ExpShifted(const T* x, int64_t n, T shift, T scale, T* out);

/// out[j] = exp(mult * x[j] - shift) (out may be x), mult > 0 (so -inf stays -inf);
/// returns the sum. Attention's softmax folds its 1/sqrt(D) scale in as `mult`.
template <typename T> double ExpAffine(const T* x, int64_t n, T mult, T shift, T* out);

/// out[j] = out_scale * tanh(in_scale * x[j]) (out may be x). For float on AVX2 CPUs tanh
/// is a [13/6] odd rational on x clamped to |x| <= 7.9053 (relative error <= 4e-7,
/// accurate down to tiny |x|); otherwise std::tanh.
template <typename T> void ScaledTanh(const T* x, int64_t n, T in_scale, T out_scale, T* out);

/// out[j] = (out[j] * factor) * (1 - t * t) with t = y[j] / cap: a row of loss gradients
/// scaled and carried through the softcap y = cap tanh(x / cap). Each element's operations in
/// this order, rounded one by one (no fused multiply-add), so every element equals that scalar
/// expression on every CPU; vectorised for float on AVX-512 and AVX2.
template <typename T> void ScaleSoftcapGrad(const T* y, int64_t n, T factor, T cap, T* out);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_VEC_MATH_H_
