// The cos and sin that gpt.rotary and gpt.rotary_grad rotate by: nanochat's rotary tables
// (NANOCHAT.md 1.5), in every dtype and on every device. nanochat builds them in fp32 and
// stores them as bf16:
//   inv_freq[j] = 1 / base^(arange(0, D, 2)[j] / D)      each step an fp32 torch op
//   angle[t, j] = t * inv_freq[j]                          an fp32 product (torch.outer)
//   cos, sin    = cos(angle), sin(angle) in fp32, then .bfloat16()
// so the rotation uses bf16 values even where the arithmetic around it is f32 (our float32
// mode) or f64 (finite-difference checks): the table is the model's, the dtype only the
// arithmetic's. Every fp32 step here is computed exactly rounded (in double, then rounded to
// float), which is what the fp32 ops aim at; PyTorch's own fp32 cos/sin are within an ulp of
// it, and only where that ulp crosses a bf16 rounding boundary do the tables differ (measured
// against torch 2.5.1 on the CPU: 4 of the 1,310,720 entries of nanochat d20's table,
// positions < 20480 and D = 128, each one a value on an exact bf16 tie).
// One definition, plain C++ (no MLIR): the CPU kernels (runtime/kernels/cpu/rotary.cc) call
// it per token, the GPU lowering (compiler/lowering/gpu/rotary_kernels.cc) bakes it into the
// artifact as constant tables, so every path rotates by the same bits.
#ifndef GPT_SFT_MODEL_ROTARY_TABLE_H_
#define GPT_SFT_MODEL_ROTARY_TABLE_H_

#include <cstdint>

namespace gpt_sft::compiler {

/// inv_freq of pair `pair` (0 <= pair < head_dim / 2): 1 / base^(2 pair / head_dim) through
/// nanochat's fp32 steps: the exponent an fp32 quotient, the power of fp32(base) an fp32
/// value, its reciprocal an fp32 quotient.
float RotaryInverseFrequency(int64_t pair, int64_t head_dim, double base);

/// The table entry of one position and pair: bf16 values (as f32) of cos and sin of the fp32
/// angle fp32(position) * inv_freq. `position` is exact in fp32 (|position| < 2^24).
struct RotaryCosSin {
  float cos, sin;
};
RotaryCosSin RotaryCosSinAt(int64_t position, float inv_freq);

/// The tables of positions 0 .. positions-1: cos[p * (D/2) + j] and sin[p * (D/2) + j], each
/// [positions, head_dim / 2] row-major (nanochat's cos/sin buffers without their unit dims).
void FillRotaryTables(int64_t positions, int64_t head_dim, double base, float* cos, float* sin);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_MODEL_ROTARY_TABLE_H_
