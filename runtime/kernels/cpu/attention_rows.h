// The elementwise row steps of attention's tiles (attention.cc), between its tile products:
// the mask, the accumulator's rescale and final division, and the score gradient. For
// float on AVX-512 CPUs they run 16 lanes at a time; each element takes exactly the scalar
// loop's operations (no reassociation, no fused multiply-add), so every path gives the
// same bits. `path` forces the scalar loops (tests compare the two).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_ATTENTION_ROWS_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_ATTENTION_ROWS_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

enum class RowPath { kAuto, kScalar };

/// True when kAuto runs the AVX-512 loops (float only).
bool AttentionRowsUseAvx512();

/// s[j] = -inf for j >= visible_end, and where key_ids[j] != query_id (key_ids may be null).
template <typename T>
void MaskRow(T* s, int64_t n, int64_t visible_end, const int32_t* key_ids, int32_t query_id,
             RowPath path = RowPath::kAuto);

/// x[j] *= factor.
template <typename T>
void ScaleRow(T* x, int64_t n, T factor, RowPath path = RowPath::kAuto);

/// out[j] = T(acc[j] / divisor), the division in double.
template <typename T>
void DivideRow(const T* acc, int64_t n, double divisor, T* out, RowPath path = RowPath::kAuto);

/// x[j] = RoundToBf16(x[j]) (round_bf16.h) for float, the identity for double: the bf16
/// attention's probabilities and score gradients before their tile products.
template <typename T>
void RoundRowToBf16(T* x, int64_t n, RowPath path = RowPath::kAuto);

/// ds[j] = p[j] * (dp[j] - delta) * scale, left to right (ds may be dp).
template <typename T>
void ScoreGradRow(const T* p, const T* dp, int64_t n, T delta, T scale, T* ds, RowPath path = RowPath::kAuto);

/// The bf16 attention's row steps fused (one pass each instead of two or three), each
/// giving exactly the bits of the chain of steps it names. On float with AVX-512F (and AVX2)
/// they run 16 lanes at a time with vec_math's exp (exp_avx512.h) and max order; otherwise,
/// or with RowPath::kScalar, they run that chain itself (ScaleRow, MaxOf, ExpAffine,
/// ScoreGradRow, RoundRowToBf16: each on its own loop or kernel).

/// The forward's scores: x[j] *= scale (ScaleRow), then returns MaxOf(x, n) (vec_math.h) of
/// the scaled row. n >= 1.
float ScaleRowAndMax(float* x, int64_t n, float scale, RowPath path = RowPath::kAuto);

/// The forward's probabilities: e[j] = ExpAffine(x, n, 1, shift)'s exp, x[j] = RoundToBf16(e[j]);
/// returns ExpAffine's sum (of the unrounded e).
double ExpRowRoundedToBf16(float* x, int64_t n, float shift, RowPath path = RowPath::kAuto);

/// The backward's probabilities: ScaleRow(x, n, scale), then ExpAffine(x, n, 1, shift, x).
void ScaledExpRow(float* x, int64_t n, float scale, float shift, RowPath path = RowPath::kAuto);

/// The backward's score gradients: ScoreGradRow(p, dp, n, delta, 1, ds), then RoundRowToBf16
/// of ds and of p (ds may be dp).
void ScoreGradRowRoundedToBf16(float* p, const float* dp, int64_t n, float delta, float* ds,
                               RowPath path = RowPath::kAuto);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ATTENTION_ROWS_H_
