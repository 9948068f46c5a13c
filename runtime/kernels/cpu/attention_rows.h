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

/// The bf16 attention's row steps fused (one pass each instead of two or three) over rows
/// [0, rows) of a tile (row stride n), each giving exactly the bits of the chain of steps it
/// names, row by row. On float with AVX-512F (and AVX2) they run 16 lanes at a time with
/// vec_math's exp (exp_avx512.h) and max order; otherwise, or with RowPath::kScalar, they run
/// that chain itself (ScaleRow, MaxOf, ExpAffine, ScoreGradRow, RoundRowToBf16: each on its
/// own loop or kernel).

/// The forward's scores: x[j] *= scale (ScaleRow), then maxes[r] = MaxOf (vec_math.h) of
/// scaled row r. n >= 1.
void ScaleRowsAndMax(float* x, int64_t rows, int64_t n, float scale, float* maxes, RowPath path = RowPath::kAuto);

/// The forward's probabilities: row r's e[j] = ExpAffine(x_r, n, 1, shifts[r])'s exp, then
/// x_r[j] = RoundToBf16(e[j]); sums[r] = ExpAffine's sum (of the unrounded e). Rows whose
/// shift is -inf (nothing visible yet) are left as they are, with sums[r] = 0. With `bf16`
/// (row stride bf16_ld), each row's rounded values are also written there as bf16 (their top
/// halves: the bf16 tile kernel's packing of them), zeros for the skipped rows.
void ExpRowsRoundedToBf16(float* x, int64_t rows, int64_t n, const float* shifts, double* sums,
                          uint16_t* bf16 = nullptr, int64_t bf16_ld = 0, RowPath path = RowPath::kAuto);

/// The backward's probabilities: ScaleRow(x_r, n, scale), then ExpAffine(x_r, n, 1, shifts[r], x_r).
void ScaledExpRows(float* x, int64_t rows, int64_t n, float scale, const float* shifts,
                   RowPath path = RowPath::kAuto);

/// The backward's score gradients: ScoreGradRow(p_r, dp_r, n, deltas[r], 1, ds_r), then
/// RoundRowToBf16 of ds_r and of p_r (ds may be dp).
void ScoreGradRowsRoundedToBf16(float* p, const float* dp, int64_t rows, int64_t n, const float* deltas, float* ds,
                                RowPath path = RowPath::kAuto);

/// The backward's Delta under bf16: dots[r] = sum_d double(dout_r[d]) * RoundToBf16(out_r[d]),
/// added in order of d from 0, for `rows` consecutive rows of length n. On AVX-512 8 rows at
/// a time, one per double lane (each lane's sum still in order of d); kScalar: row by row.
void RoundedRowDots(const float* out, const float* dout, int64_t rows, int64_t n, double* dots,
                    RowPath path = RowPath::kAuto);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ATTENTION_ROWS_H_
