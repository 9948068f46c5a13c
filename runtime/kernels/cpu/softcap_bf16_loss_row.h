// The fused lm_head loss's row under bf16 autocast when its cotangent is stored as bf16 bit
// patterns (the oneDNN kernel's prepared operand, matmul_bf16.h): the same bits as the chain
// SoftcapBf16Range (input rounded), MaxOf, cross_entropy_rows::SoftcapBf16RowLossAndGrad and
// PrepareBf16Operand, in three passes over the row where the chain makes seven: the softcap
// with the max, the exps with their sum, and the gradient's scaling, rounding and softcap factor
// with the narrowing. AVX512_BF16 only (where oneDNN's bf16 kernel runs); the caller keeps the
// chain elsewhere.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_SOFTCAP_BF16_LOSS_ROW_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_SOFTCAP_BF16_LOSS_ROW_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

/// Whether this CPU runs the two functions below (AVX512F, AVX512BW and AVX512_BF16).
bool SoftcapBf16LossRowFused();

/// SoftcapBf16Range(table, x, V, cap, /*round_input=*/true, x) in place, returning MaxOf of
/// the result (the same value, NaN included: the max is taken 8 lanes at a time in MaxOf's
/// order).
float SoftcapBf16InPlaceWithMax(const float* table, float* x, int64_t V);

/// For a counted row (target >= 0) of softcapped logits `y` with max `m`: its loss term
/// (returned) and, as bf16 bit patterns in dy, PrepareBf16Operand of SoftcapBf16RowLossAndGrad's
/// gradient. `exps` is scratch for V floats.
double SoftcapBf16RowLossAndNarrowedGrad(const float* y, float m, int32_t target, int64_t V, double scale, float cap,
                                         float* exps, uint16_t* dy);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_SOFTCAP_BF16_LOSS_ROW_H_
