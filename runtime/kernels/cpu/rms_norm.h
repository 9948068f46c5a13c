// Parameter-free RMSNorm over the last dimension: y = x * rsqrt(mean(x^2) + eps), for
// rows x [rows, dim]; eps 2^-23 (fp32 epsilon, as torch uses for fp32/bf16 inputs).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_RMS_NORM_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_RMS_NORM_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

inline constexpr double kRmsNormEps = 1.1920928955078125e-07;

template <typename T> void RmsNorm(const T* x, T* y, int64_t rows, int64_t dim, T eps = T(kRmsNormEps));
/// dx = r * (dy - y * mean(dy * y)), r = rsqrt(mean(x^2) + eps)
template <typename T>
void RmsNormGrad(const T* x, const T* dy, T* dx, int64_t rows, int64_t dim, T eps = T(kRmsNormEps));

/// One row of each (what RmsNorm and RmsNormGrad run per row, for kernels that fuse a norm
/// with its neighbour and must compute the same bits). The whole row is read before any of
/// the output is written, so y (dx) may be the same row as x (or dy).
template <typename T> void RmsNormRow(const T* x, T* y, int64_t dim, T eps);
template <typename T> void RmsNormGradRow(const T* x, const T* dy, T* dx, int64_t dim, T eps);
/// RmsNormRow / RmsNormGradRow on `rows` consecutive rows (the same bits), faster: the rows'
/// sums run side by side (RowSums, vec_math.h). A batch of rows is read before its outputs
/// are written, so the in-place uses above hold too.
template <typename T> void RmsNormRows(const T* x, T* y, int64_t rows, int64_t dim, T eps);
template <typename T> void RmsNormGradRows(const T* x, const T* dy, T* dx, int64_t rows, int64_t dim, T eps);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_RMS_NORM_H_
