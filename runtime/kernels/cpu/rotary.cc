// Implements Rotary and its VJP, parallel over tokens. Angles are computed in double from
// fp32 inverse frequencies, as torch builds the tables in fp32.
#include "runtime/kernels/cpu/rotary.h"

#include <cmath>

#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {
namespace {

// sign = +1: the forward rotation; sign = -1: its transpose (the VJP).
double* TakeInverseFrequencies(RotaryShape s, WorkspaceCarver& carver) {
  return carver.Take<double>(s.D / 2, "rotary inverse frequencies");
}

template <typename T>
void Rotate(const T* in, const int32_t* positions, T* out, RotaryShape s, double base, double sign,
            Workspace workspace) {
  const int64_t half = s.D / 2;
  WorkspaceCarver carver(workspace);
  double* inv_freq = TakeInverseFrequencies(s, carver);
  for (int64_t j = 0; j < half; ++j) inv_freq[j] = float(1.0 / std::pow(base, double(2 * j) / s.D));
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
void Rotary(const T* x, const int32_t* positions, T* y, RotaryShape s, double base, Workspace workspace) {
  Rotate(x, positions, y, s, base, +1.0, workspace);
}

template <typename T>
void RotaryGrad(const T* dy, const int32_t* positions, T* dx, RotaryShape s, double base, Workspace workspace) {
  Rotate(dy, positions, dx, s, base, -1.0, workspace);
}

template <typename T>
void Rotary(const T* x, const int32_t* positions, T* y, RotaryShape s, double base) {
  const ScratchBuffer scratch(RotaryWorkspaceBytes(s));
  Rotary(x, positions, y, s, base, scratch.get());
}

template <typename T>
void RotaryGrad(const T* dy, const int32_t* positions, T* dx, RotaryShape s, double base) {
  const ScratchBuffer scratch(RotaryWorkspaceBytes(s));
  RotaryGrad(dy, positions, dx, s, base, scratch.get());
}

template void Rotary<float>(const float*, const int32_t*, float*, RotaryShape, double);
template void Rotary<double>(const double*, const int32_t*, double*, RotaryShape, double);
template void RotaryGrad<float>(const float*, const int32_t*, float*, RotaryShape, double);
template void RotaryGrad<double>(const double*, const int32_t*, double*, RotaryShape, double);
template void Rotary<float>(const float*, const int32_t*, float*, RotaryShape, double, Workspace);
template void Rotary<double>(const double*, const int32_t*, double*, RotaryShape, double, Workspace);
template void RotaryGrad<float>(const float*, const int32_t*, float*, RotaryShape, double, Workspace);
template void RotaryGrad<double>(const double*, const int32_t*, double*, RotaryShape, double, Workspace);

}  // namespace gpt_sft::runtime::kernels
