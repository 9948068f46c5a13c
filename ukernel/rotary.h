// The rotary micro-kernel family: nanochat's rotary embedding by cos/sin tables (constants of
// the artifact), forward or backward, alone or fused with the QK-norm over each head row,
// under one builtin name per element type (`cpu.rotary.f32`, `cpu.rotary.f64`).
//
// Arguments of a `cpu.rotary` launch, in order:
//   scalars  op, flags, B, T, H, D, P (i64), eps (f64; 0 unless the op norms);
//   buffers  the slots of RotarySlot in order, those RotaryHasSlot(op, slot) names: head rows
//            [B, T, H, D] of the element type, positions [B, T] i32 in [0, P), cos and sin
//            [P, D/2] f32.
#ifndef GPT_SFT_UKERNEL_ROTARY_H_
#define GPT_SFT_UKERNEL_ROTARY_H_

#include <array>
#include <cstdint>
#include <string>

namespace gpt_sft::ukernel {

inline constexpr const char kRotaryName[] = "rotary";

enum class RotaryOp : int64_t {
  kRotary = 0,              // in = x -> out = rotary(x)
  kRotaryGrad = 1,          // in = dy -> out = rotary's VJP
  kRotaryRmsNorm = 2,       // in = x -> rot = rotary(x), out = rms_norm(rot) (the QK-norm)
  kRmsNormRotaryGrad = 3,   // in = rot, dy -> out = rotary_grad(rms_norm_grad(rot, dy))
};
inline constexpr std::array<const char*, 4> kRotaryOpNames = {"rotary", "rotary_grad", "rotary_rms_norm",
                                                              "rms_norm_rotary_grad"};

/// f32: nanochat's bf16 rotary (gpt.rotary's round_bf16) and, where the op norms, autocast's
/// roundings around the norm (forward: y rounded; backward: dy and the norm's gradient).
inline constexpr int64_t kRotaryBf16 = 1 << 0;
inline constexpr int64_t kRotaryAllFlags = 1;

struct RotaryParams {
  RotaryOp op = RotaryOp::kRotary;
  int64_t flags = 0;
  int64_t B = 0, T = 0, H = 0, D = 0, P = 0;
  double eps = 0.0;

  bool Has(int64_t flag) const { return (flags & flag) != 0; }
  int64_t HeadElements() const { return B * T * H * D; }
  int64_t TableElements() const { return P * (D / 2); }
};

enum class RotarySlot : int { kIn, kDy, kPositions, kCos, kSin, kRot, kOut };
inline constexpr int kRotarySlotCount = 7;
inline constexpr std::array<const char*, kRotarySlotCount> kRotarySlotNames = {"in",  "dy",  "positions", "cos",
                                                                               "sin", "rot", "out"};

constexpr bool RotaryHasSlot(RotaryOp op, RotarySlot s) {
  if (s == RotarySlot::kDy) return op == RotaryOp::kRmsNormRotaryGrad;
  if (s == RotarySlot::kRot) return op == RotaryOp::kRotaryRmsNorm;
  return true;
}

/// Null when the driver runs `p` (with `f64`: on double values), else why not.
constexpr const char* RotaryUnsupported(const RotaryParams& p, bool f64) {
  if ((p.flags & ~kRotaryAllFlags) != 0) return "unknown flag bits";
  if (static_cast<uint64_t>(p.op) > static_cast<uint64_t>(RotaryOp::kRmsNormRotaryGrad)) return "unknown op";
  if (p.B < 0 || p.T < 0 || p.H < 0 || p.D < 0 || p.P < 0) return "negative dims";
  if (p.D % 2 != 0) return "the head dim must be even";
  if (p.Has(kRotaryBf16) && f64) return "the bf16 rotary is f32's";
  return nullptr;
}

/// "<op> bf16" or "<op> -".
inline std::string RotaryDescription(const RotaryParams& p) {
  const auto op = static_cast<size_t>(p.op);
  return std::string(op < kRotaryOpNames.size() ? kRotaryOpNames[op] : "?") + (p.Has(kRotaryBf16) ? " bf16" : " -");
}

}  // namespace gpt_sft::ukernel

#endif  // GPT_SFT_UKERNEL_ROTARY_H_
