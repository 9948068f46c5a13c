// Implements the rotary tables. Each fp32 step of nanochat's construction (the power, cos, sin)
// is computed in double and rounded to float once: that is the exactly rounded fp32 result
// except where the true value lies within a double's error of the midpoint between two floats,
// far rarer than the fp32 library's own ulp slips (rotary_table.h).
#include "model/rotary_table.h"

#include <cmath>

#include "model/round_to_bf16.h"

namespace gpt_sft::compiler {

float RotaryInverseFrequency(int64_t pair, int64_t head_dim, double base) {
  const float exponent = float(2 * pair) / float(head_dim);  // arange(0, D, 2) / D, in fp32
  const float power = float(std::pow(double(float(base)), double(exponent)));
  return 1.0f / power;
}

RotaryCosSin RotaryCosSinAt(int64_t position, float inv_freq) {
  const double angle = double(float(position) * inv_freq);  // the fp32 product, as torch.outer
  return {RoundToBf16(float(std::cos(angle))), RoundToBf16(float(std::sin(angle)))};
}

void FillRotaryTables(int64_t positions, int64_t head_dim, double base, float* cos, float* sin) {
  const int64_t half = head_dim / 2;
  for (int64_t j = 0; j < half; ++j) {
    const float inv_freq = RotaryInverseFrequency(j, head_dim, base);
    for (int64_t p = 0; p < positions; ++p) {
      const RotaryCosSin entry = RotaryCosSinAt(p, inv_freq);
      cos[p * half + j] = entry.cos;
      sin[p * half + j] = entry.sin;
    }
  }
}

}  // namespace gpt_sft::compiler
