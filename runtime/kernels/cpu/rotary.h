// Rotary embedding with per-token positions (nanochat's convention): for x [B,T,H,D] and
// positions [B,T], with x1 = x[..., :D/2], x2 = x[..., D/2:], and c, s the entries of
// nanochat's bf16 cos/sin tables at (pos, j) (model/rotary_table.h: the fp32 angle
// pos / base^(2j/D), its cos and sin rounded to bf16):
//   y1 = x1 c + x2 s,   y2 = -x1 s + x2 c      (a rotation by -angle)
// The VJP is the transposed rotation: dx1 = dy1 c - dy2 s, dx2 = dy1 s + dy2 c.
// The tables are bf16 values in every mode; the products and sums are T's arithmetic. With
// Rounding::kBf16 (float only), nanochat's rotary under bf16 autocast: every product and sum
// is rounded to bf16 as well (round_bf16.h), forward and VJP alike.
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

/// The same rotation (grad: the VJP's) with cos and sin read from nanochat's tables
/// (model/rotary_table.h, FillRotaryTables: [P, D/2] each) at the token's position
/// instead of computed per token: the same entries and the same arithmetic, so the result is
/// bit-identical to Rotary / RotaryGrad, without their trigonometry (the compiled cpu step's
/// kernel: the compiler bakes the tables into the artifact). Every position must lie in
/// [0, P); the caller checks (no check here).
template <typename T>
void RotaryFromTables(const T* x, const int32_t* positions, const float* cos, const float* sin, T* y, RotaryShape s,
                      bool grad, RotaryRounding rounding = RotaryRounding::kNone);

/// One head row of D (no rounding): the rotation RotaryFromTables applies to it, with cos and
/// sin the table rows [D/2] of the token's position, for kernels that fuse the rotation with
/// a neighbour and must compute the same bits. `out` may be `in` (each pair is read before
/// it is written).
template <typename T>
void RotateRowFromTables(const T* in, T* out, int64_t D, const float* cos, const float* sin, bool grad);
/// RotateRowFromTables with nanochat's bf16 rounding (RotaryRounding::kBf16: every product
/// and sum rounded), the arithmetic RotaryFromTables applies to each row then.
void RotateRowFromTablesBf16(const float* in, float* out, int64_t D, const float* cos, const float* sin, bool grad);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ROTARY_H_
