// Implements Rotary and its VJP, parallel over tokens. cos and sin are nanochat's bf16 table
// entries (compiler/numerics/rotary_table.h), computed per token from the pair's inverse
// frequency, so any position works (the table a GPU artifact carries is the same function).
#include "runtime/kernels/cpu/rotary.h"

#include <type_traits>

#include "compiler/numerics/rotary_table.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

float* TakeInverseFrequencies(RotaryShape s, WorkspaceCarver& carver) {
  return carver.Take<float>(s.D / 2, "rotary inverse frequencies");
}

/// nanochat's bf16 rotary on floats: every product and sum rounded to bf16.
void RotateBf16(const float* in, const int32_t* positions, float* out, RotaryShape s, const float* inv_freq,
                float sign) {
  const int64_t half = s.D / 2;
  ParallelFor(s.B * s.T, 64, [&](int64_t begin, int64_t end) {
    for (int64_t bt = begin; bt < end; ++bt) {
      for (int64_t j = 0; j < half; ++j) {
        const compiler::RotaryCosSin table = compiler::RotaryCosSinAt(positions[bt], inv_freq[j]);
        const float c = table.cos, sn = sign * table.sin;
        for (int64_t h = 0; h < s.H; ++h) {
          const int64_t o = (bt * s.H + h) * s.D;
          const float x1 = in[o + j], x2 = in[o + half + j];
          out[o + j] = RoundToBf16(RoundToBf16(x1 * c) + RoundToBf16(x2 * sn));
          out[o + half + j] = RoundToBf16(RoundToBf16(-x1 * sn) + RoundToBf16(x2 * c));
        }
      }
    }
  });
}

// sign = +1: the forward rotation; sign = -1: its transpose (the VJP). The table's bf16 values
// widened to T; the products and sums in T.
template <typename T>
void Rotate(const T* in, const int32_t* positions, T* out, RotaryShape s, double base, float sign,
            Workspace workspace, RotaryRounding rounding) {
  const int64_t half = s.D / 2;
  WorkspaceCarver carver(workspace);
  float* inv_freq = TakeInverseFrequencies(s, carver);
  for (int64_t j = 0; j < half; ++j) inv_freq[j] = compiler::RotaryInverseFrequency(j, s.D, base);
  if constexpr (std::is_same_v<T, float>) {
    if (rounding == RotaryRounding::kBf16) return RotateBf16(in, positions, out, s, inv_freq, sign);
  }
  ParallelFor(s.B * s.T, 64, [&](int64_t begin, int64_t end) {
    for (int64_t bt = begin; bt < end; ++bt) {
      for (int64_t j = 0; j < half; ++j) {
        const compiler::RotaryCosSin table = compiler::RotaryCosSinAt(positions[bt], inv_freq[j]);
        const T c = T(table.cos), sn = T(sign * table.sin);
        for (int64_t h = 0; h < s.H; ++h) {
          const int64_t o = (bt * s.H + h) * s.D;
          const T x1 = in[o + j], x2 = in[o + half + j];
          out[o + j] = x1 * c + x2 * sn;
          out[o + half + j] = -x1 * sn + x2 * c;
        }
      }
    }
  });
}

}  // namespace

int64_t RotaryWorkspaceBytes(RotaryShape s) {
  WorkspaceCarver count;
  TakeInverseFrequencies(s, count);
  return count.used();
}

template <typename T>
void Rotary(const T* x, const int32_t* positions, T* y, RotaryShape s, double base, Workspace workspace,
            RotaryRounding rounding) {
  Rotate(x, positions, y, s, base, +1.0f, workspace, rounding);
}

template <typename T>
void RotaryGrad(const T* dy, const int32_t* positions, T* dx, RotaryShape s, double base, Workspace workspace,
                RotaryRounding rounding) {
  Rotate(dy, positions, dx, s, base, -1.0f, workspace, rounding);
}

template <typename T>
void Rotary(const T* x, const int32_t* positions, T* y, RotaryShape s, double base, RotaryRounding rounding) {
  const ScratchBuffer scratch(RotaryWorkspaceBytes(s));
  Rotary(x, positions, y, s, base, scratch.get(), rounding);
}

template <typename T>
void RotaryGrad(const T* dy, const int32_t* positions, T* dx, RotaryShape s, double base, RotaryRounding rounding) {
  const ScratchBuffer scratch(RotaryWorkspaceBytes(s));
  RotaryGrad(dy, positions, dx, s, base, scratch.get(), rounding);
}

template void Rotary<float>(const float*, const int32_t*, float*, RotaryShape, double, RotaryRounding);
template void Rotary<double>(const double*, const int32_t*, double*, RotaryShape, double, RotaryRounding);
template void RotaryGrad<float>(const float*, const int32_t*, float*, RotaryShape, double, RotaryRounding);
template void RotaryGrad<double>(const double*, const int32_t*, double*, RotaryShape, double, RotaryRounding);
template void Rotary<float>(const float*, const int32_t*, float*, RotaryShape, double, Workspace, RotaryRounding);
template void Rotary<double>(const double*, const int32_t*, double*, RotaryShape, double, Workspace, RotaryRounding);
template void RotaryGrad<float>(const float*, const int32_t*, float*, RotaryShape, double, Workspace, RotaryRounding);
template void RotaryGrad<double>(const double*, const int32_t*, double*, RotaryShape, double, Workspace,
                                 RotaryRounding);

}  // namespace gpt_sft::runtime::kernels
