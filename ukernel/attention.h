// The attention micro-kernel family: causal flash-style attention at the default scale,
// GQA/MQA, optionally document-causal by segment ids, forward or backward, under one builtin
// name per element type (`cpu.attention.f32`, `cpu.attention.f64`).
//
// Arguments of a `cpu.attention` launch, in order:
//   scalars  op, flags, B, T, H, Hkv, D (i64);
//   buffers  the slots of AttentionSlot in order, those AttentionHasSlot(p, slot) names:
//            q, out, dout, dq [B, T, H, D]; k, v, dk, dv [B, T, Hkv, D]; segment ids [B, T]
//            i32; lse [B, H, T].
#ifndef GPT_SFT_UKERNEL_ATTENTION_H_
#define GPT_SFT_UKERNEL_ATTENTION_H_

#include <array>
#include <cstdint>
#include <string>

namespace gpt_sft::ukernel {

inline constexpr const char kAttentionName[] = "attention";

enum class AttentionOp : int64_t {
  kForward = 0,   // q, k, v[, segments] -> out, lse
  kBackward = 1,  // q, k, v[, segments], out, lse, dout -> dq, dk, dv
};
inline constexpr std::array<const char*, 2> kAttentionOpNames = {"forward", "backward"};

inline constexpr int64_t kAttentionBf16Inputs = 1 << 0;  // f32 holding bf16 values: bf16 tile products,
                                                         // P and dS rounded as PyTorch's flash attention
inline constexpr int64_t kAttentionSegments = 1 << 1;    // a segment-ids buffer: document-causal rows
inline constexpr int64_t kAttentionPreparedDv = 1 << 2;  // backward, bf16: dv written prepared for the
                                                         // bf16 GEMMs that alone read it
inline constexpr int64_t kAttentionAllFlags = (1 << 3) - 1;
inline constexpr std::array<const char*, 3> kAttentionFlagNames = {"bf16", "segments", "prepared_dv"};

struct AttentionParams {
  AttentionOp op = AttentionOp::kForward;
  int64_t flags = 0;
  int64_t B = 0, T = 0, H = 0, Hkv = 0, D = 0;

  bool Has(int64_t flag) const { return (flags & flag) != 0; }
};

enum class AttentionSlot : int { kQ, kK, kV, kSegments, kOut, kLse, kDout, kDq, kDk, kDv };
inline constexpr int kAttentionSlotCount = 10;
inline constexpr std::array<const char*, kAttentionSlotCount> kAttentionSlotNames = {
    "q", "k", "v", "segment_ids", "out", "lse", "dout", "dq", "dk", "dv"};

constexpr bool AttentionHasSlot(const AttentionParams& p, AttentionSlot s) {
  switch (s) {
    case AttentionSlot::kSegments:
      return p.Has(kAttentionSegments);
    case AttentionSlot::kDout:
    case AttentionSlot::kDq:
    case AttentionSlot::kDk:
    case AttentionSlot::kDv:
      return p.op == AttentionOp::kBackward;
    default:
      return true;
  }
}

/// Elements of a slot's buffer.
constexpr int64_t AttentionSlotElements(const AttentionParams& p, AttentionSlot s) {
  switch (s) {
    case AttentionSlot::kK:
    case AttentionSlot::kV:
    case AttentionSlot::kDk:
    case AttentionSlot::kDv:
      return p.B * p.T * p.Hkv * p.D;
    case AttentionSlot::kSegments:
      return p.B * p.T;
    case AttentionSlot::kLse:
      return p.B * p.H * p.T;
    default:
      return p.B * p.T * p.H * p.D;
  }
}

/// Null when the driver runs `p` (with `f64`: on double values), else why not.
constexpr const char* AttentionUnsupported(const AttentionParams& p, bool f64) {
  if ((p.flags & ~kAttentionAllFlags) != 0) return "unknown flag bits";
  if (p.op != AttentionOp::kForward && p.op != AttentionOp::kBackward) return "unknown op";
  if (p.B < 0 || p.T < 0 || p.H < 0 || p.Hkv <= 0 || p.D < 0) return "bad dims";
  if (p.H % p.Hkv != 0) return "query heads must be a multiple of the key/value heads";
  if (p.Has(kAttentionBf16Inputs) && f64) return "bf16 inputs are f32 buffers";
  if (p.Has(kAttentionPreparedDv) && (p.op != AttentionOp::kBackward || !p.Has(kAttentionBf16Inputs))) {
    return "only the bf16 backward writes dv prepared";
  }
  return nullptr;
}

/// "<op> <flag>|..." ("-" for none), e.g. "backward bf16|prepared_dv".
inline std::string AttentionDescription(const AttentionParams& p) {
  const auto op = static_cast<size_t>(p.op);
  std::string s = op < kAttentionOpNames.size() ? kAttentionOpNames[op] : "?";
  std::string flags;
  for (size_t bit = 0; bit < kAttentionFlagNames.size(); ++bit) {
    if ((p.flags >> bit) & 1) flags += (flags.empty() ? "" : "|") + std::string(kAttentionFlagNames[bit]);
  }
  return s + " " + (flags.empty() ? "-" : flags);
}

}  // namespace gpt_sft::ukernel

#endif  // GPT_SFT_UKERNEL_ATTENTION_H_
