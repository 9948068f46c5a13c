// The row-norm micro-kernel family: rms_norm over the last dim of `rows` rows, forward or
// backward, with the residual add it is fused with and autocast's roundings, under one builtin
// name per element type (`cpu.norm.f32`, `cpu.norm.f64`).
//
// Arguments of a `cpu.norm` launch, in order:
//   scalars  op, flags, rows, dim (i64), eps (f64);
//   buffers  the slots of NormSlot in order, those NormHasSlot(op, slot) names; each holds
//            rows x dim elements.
#ifndef GPT_SFT_UKERNEL_NORM_H_
#define GPT_SFT_UKERNEL_NORM_H_

#include <array>
#include <cstdint>
#include <string>

namespace gpt_sft::ukernel {

inline constexpr const char kNormName[] = "norm";

enum class NormOp : int64_t {
  kRmsNorm = 0,         // in0 = x -> out0 = y
  kRmsNormGrad = 1,     // in0 = x, in1 = dy -> out0 = dx
  kAddRmsNorm = 2,      // in0 = a, in1 = b -> out0 = sum = a + b, out1 = y = rms_norm(sum)
  kRmsNormGradAdd = 3,  // in0 = x, in1 = dy, in2 = r -> out0 = r + rms_norm_grad(x, dy)
};
inline constexpr std::array<const char*, 4> kNormOpNames = {"rms_norm", "rms_norm_grad", "add_rms_norm",
                                                            "rms_norm_grad_add"};

inline constexpr int64_t kNormRoundOutput = 1 << 0;  // f32: out0 (y, dx, out) rounded to bf16 values
inline constexpr int64_t kNormRoundDy = 1 << 1;      // f32, kRmsNormGrad: dy rounded first (a prologue)
inline constexpr int64_t kNormAllFlags = (1 << 2) - 1;
inline constexpr std::array<const char*, 2> kNormFlagNames = {"round", "round_dy"};

/// Row length above which kRmsNormGradAdd refuses (its rows live on the stack).
inline constexpr int64_t kNormMaxGradAddDim = 4096;

struct NormParams {
  NormOp op = NormOp::kRmsNorm;
  int64_t flags = 0;
  int64_t rows = 0, dim = 0;
  double eps = 0.0;

  bool Has(int64_t flag) const { return (flags & flag) != 0; }
};

enum class NormSlot : int { kIn0, kIn1, kIn2, kOut0, kOut1 };
inline constexpr int kNormSlotCount = 5;
inline constexpr std::array<const char*, kNormSlotCount> kNormSlotNames = {"in0", "in1", "in2", "out0", "out1"};

constexpr bool NormHasSlot(NormOp op, NormSlot s) {
  switch (s) {
    case NormSlot::kIn0:
    case NormSlot::kOut0:
      return true;
    case NormSlot::kIn1:
      return op != NormOp::kRmsNorm;
    case NormSlot::kIn2:
      return op == NormOp::kRmsNormGradAdd;
    case NormSlot::kOut1:
      return op == NormOp::kAddRmsNorm;
  }
  return false;
}

/// Null when the driver runs `p` (with `f64`: on double values), else why not.
constexpr const char* NormUnsupported(const NormParams& p, bool f64) {
  if ((p.flags & ~kNormAllFlags) != 0) return "unknown flag bits";
  if (p.rows < 0 || p.dim < 0) return "negative dims";
  if (p.flags != 0 && f64) return "the roundings are bf16 autocast's, on f32";
  switch (p.op) {
    case NormOp::kRmsNorm:
    case NormOp::kRmsNormGrad:
      break;
    case NormOp::kAddRmsNorm:
      if (p.flags != 0) return "add_rms_norm rounds nothing";
      break;
    case NormOp::kRmsNormGradAdd:
      if (p.dim > kNormMaxGradAddDim) return "rms_norm_grad_add's rows are at most kNormMaxGradAddDim";
      break;
    default:
      return "unknown op";
  }
  if ((p.flags & kNormRoundDy) && p.op != NormOp::kRmsNormGrad) return "only rms_norm_grad rounds its dy";
  return nullptr;
}

/// "<op> <flag>|..." ("-" for none), e.g. "rms_norm_grad round_dy|round".
inline std::string NormDescription(const NormParams& p) {
  const auto op = static_cast<size_t>(p.op);
  std::string s = op < kNormOpNames.size() ? kNormOpNames[op] : "?";
  std::string flags;
  for (size_t bit = 0; bit < kNormFlagNames.size(); ++bit) {
    if ((p.flags >> bit) & 1) flags += (flags.empty() ? "" : "|") + std::string(kNormFlagNames[bit]);
  }
  return s + " " + (flags.empty() ? "-" : flags);
}

}  // namespace gpt_sft::ukernel

#endif  // GPT_SFT_UKERNEL_NORM_H_
