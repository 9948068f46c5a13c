// Rounding one f32 value to a bfloat16 value kept as f32: the meaning of gpt.round_bf16 on one
// element (the rounding nanochat's bf16 autocast does after each op, NANOCHAT.md 1.2), and of
// the bf16 rotary tables (rotary_table.h). bfloat16 is the top 16 bits of an f32 (sign,
// 8 exponent bits, 7 mantissa bits), so rounding clears the low 16 bits after adding half of
// their range, ties going to the even neighbour. Plain C++, no MLIR: the runtime's kernels
// (runtime/kernels/cpu/round_bf16.h) and the compiler's constant tables share this one
// definition.
#ifndef GPT_SFT_MODEL_ROUND_TO_BF16_H_
#define GPT_SFT_MODEL_ROUND_TO_BF16_H_

#include <cstdint>
#include <cstring>

namespace gpt_sft::compiler {

/// The bfloat16 value nearest `x` (round to nearest, ties to even), as an f32. NaN stays a
/// (quiet) NaN with the sign and top payload bits of `x`; values past bf16's largest finite
/// value round to inf, as PyTorch's `.to(torch.bfloat16)` does.
/// Written without a branch (the NaN case a select), so a loop of it vectorizes.
inline float RoundToBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  const uint32_t quieted = bits | 0x00400000u;                 // a NaN: truncation keeps it a NaN
  const uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);  // ties to where the kept lsb is 0
  bits = ((bits & 0x7fffffffu) > 0x7f800000u ? quieted : rounded) & 0xffff0000u;
  float y;
  std::memcpy(&y, &bits, sizeof(y));
  return y;
}

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_MODEL_ROUND_TO_BF16_H_
