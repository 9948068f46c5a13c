// Implements Rotary and its VJP, parallel over tokens. Angles are computed in double from
// fp32 inverse frequencies, as torch builds the tables in fp32.
#include "runtime/kernels/cpu/rotary.h"

#include <cmath>
#include <type_traits>

#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

// sign = +1: the forward rotation; sign = -1: its transpose (the VJP).
double* TakeInverseFrequencies(RotaryShape s, WorkspaceCarver& carver) {
  return carver.Take<double>(s.D / 2, "rotary inverse frequencies");
}

/// nanochat's bf16 rotary on floats: fp32 angle, bf16 cos/sin, every product and sum rounded.
void RotateBf16(const float* in, const int32_t* positions, float* out, RotaryShape s, const double* inv_freq,
                double sign) {
  const int64_t half = s.D / 2;
  ParallelFor(s.B * s.T, 64, [&](int64_t begin, int64_t end) {
    for (int64_t bt = begin; bt < end; ++bt) {
      for (int64_t j = 0; j < half; ++j) {
        const float a = float(positions[bt]) * float(inv_freq[j]);
        const float c = RoundToBf16(float(std::cos(double(a))));
        const float sn = float(sign) * RoundToBf16(float(std::sin(double(a))));
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

template <typename T>
void Rotate(const T* in, const int32_t* positions, T* out, RotaryShape s, double base, double sign,
            Workspace workspace, RotaryRounding rounding) {
  const int64_t half = s.D / 2;
  WorkspaceCarver carver(workspace);
  double* inv_freq = TakeInverseFrequencies(s, carver);
  for (int64_t j = 0; j < half; ++j) inv_freq[j] = float(1.0 / std::pow(base, double(2 * j) / s.D));
  if constexpr (std::is_same_v<T, float>) {
    if (rounding == RotaryRounding::kBf16) return RotateBf16(in, positions, out, s, inv_freq, sign);
  }
  ParallelFor(s.B * s.T, 64, [&](int64_t begin, int64_t end) {
    for (int64_t bt = begin; bt < end; ++bt) {
      const double pos = positions[bt];
      for (int64_t j = 0; j < half; ++j) {
        const double a = pos * inv_freq[j];
        const T c = T(std::cos(a)), sn = T(sign * std::sin(a));
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
  Rotate(x, positions, y, s, base, +1.0, workspace, rounding);
}

template <typename T>
void RotaryGrad(const T* dy, const int32_t* positions, T* dx, RotaryShape s, double base, Workspace workspace,
                RotaryRounding rounding) {
  Rotate(dy, positions, dx, s, base, -1.0, workspace, rounding);
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
