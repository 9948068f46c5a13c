// Rotary embedding with per-token positions (nanochat's convention): for x [B,T,H,D] and
// positions [B,T], with x1 = x[..., :D/2], x2 = x[..., D/2:], angle = pos / 10000^(2j/D):
//   y1 = x1 cos + x2 sin,   y2 = -x1 sin + x2 cos      (a rotation by -angle)
// The VJP is the rotation by +angle: dx1 = dy1 cos - dy2 sin, dx2 = dy1 sin + dy2 cos.
// With Rounding::kBf16 (float only), nanochat's rotary under bf16 autocast: the angle is an
// fp32 product, cos and sin are rounded to bf16, and every product and sum is rounded to bf16
// (round_bf16.h), forward and VJP alike.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_ROTARY_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_ROTARY_H_

#include <cstdint>

#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::kernels {

struct RotaryShape {
  int64_t B, T, H, D;
};

/// kNone: the arithmetic of T. kBf16: as above (T = float only).
enum class RotaryRounding { kNone, kBf16 };

template <typename T>
void Rotary(const T* x, const int32_t* positions, T* y, RotaryShape s, double base = 10000.0,
            RotaryRounding rounding = RotaryRounding::kNone);
template <typename T>
void RotaryGrad(const T* dy, const int32_t* positions, T* dx, RotaryShape s, double base = 10000.0,
                RotaryRounding rounding = RotaryRounding::kNone);

/// The same with the inverse frequencies in `workspace` (RotaryWorkspaceBytes(s)): no
/// allocation.
template <typename T>
void Rotary(const T* x, const int32_t* positions, T* y, RotaryShape s, double base, Workspace workspace,
            RotaryRounding rounding = RotaryRounding::kNone);
template <typename T>
void RotaryGrad(const T* dy, const int32_t* positions, T* dx, RotaryShape s, double base, Workspace workspace,
                RotaryRounding rounding = RotaryRounding::kNone);
int64_t RotaryWorkspaceBytes(RotaryShape s);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ROTARY_H_
