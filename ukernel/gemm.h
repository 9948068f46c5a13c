// The GEMM micro-kernel family: every product of matrices the cpu target runs as a library
// kernel, under one builtin name per element type (`cpu.gemm.f32`, `cpu.gemm.f64`) whose
// variant is named by its parameters instead of by a name suffix. The compiler's cpu lowering
// writes a launch's arguments from GemmParams and GemmSlot; the cpu driver reads them back
// with the same two definitions, so the argument order is written once, here.
//
// Arguments of a `cpu.gemm` launch, in order:
//   scalars  form, epilogue, flags, M, N, K (i64), eps (f64; 0 unless the epilogue norms);
//   buffers  the slots of GemmSlot in order, those GemmHasSlot(epilogue, slot) names.
#ifndef GPT_SFT_UKERNEL_GEMM_H_
#define GPT_SFT_UKERNEL_GEMM_H_

#include <array>
#include <cstdint>
#include <string>

namespace gpt_sft::ukernel {

inline constexpr const char kGemmName[] = "gemm";

/// Which product: the forward y = x wᵀ, the input gradient dx = dy w (a matmul by a
/// transposed weight the compiler folds), or the weight gradient dw = dyᵀ x.
enum class GemmForm : int64_t {
  kXWt = 0,   // a = x [M, K], b = w [N, K] -> c = y [M, N]
  kDyW = 1,   // a = dy [M, N], b = w [N, K] -> c = dx [M, K]
  kDyTX = 2,  // a = dy [M, N], b = x [M, K] -> c = dw [N, K]
};

/// What the kernel computes from each block of the product while it is in cache.
enum class GemmEpilogue : int64_t {
  kNone = 0,
  kReluSquare = 1,       // kXWt: out0 = relu(c)²
  kReluSquareGrad = 2,   // kDyW, bf16: aux = u; out0 = g = c · 2 · relu(u)
  kResidualRmsNorm = 3,  // kXWt, bf16: aux = residual; out0 = sum = bf16(res + c), out1 = rms_norm(sum)
};

/// Flag bits of GemmParams::flags. A prepared operand holds the bf16 GEMMs' packed form
/// (runtime/kernels/cpu/matmul_bf16.h) in its f32 buffer, written so by its producer.
inline constexpr int64_t kGemmBf16Inputs = 1 << 0;  // a and b hold bf16 values: the bf16 kernels
inline constexpr int64_t kGemmRoundOutput = 1 << 1;  // c rounded to bf16 values as it is written
inline constexpr int64_t kGemmPreparedA = 1 << 2;    // a as its producer wrote it, prepared
inline constexpr int64_t kGemmPreparedB = 1 << 3;    // kDyTX: b (x) prepared
inline constexpr int64_t kGemmSlabsA = 1 << 4;       // kDyTX: a (dy) in the weight gradient's slabs
inline constexpr int64_t kGemmPreparedOut = 1 << 5;  // the epilogue's last output written prepared
inline constexpr int64_t kGemmAllFlags = (1 << 6) - 1;

inline constexpr std::array<const char*, 3> kGemmFormNames = {"xwt", "dyw", "dytx"};
inline constexpr std::array<const char*, 4> kGemmEpilogueNames = {"none", "relu_square", "relu_square_grad",
                                                                  "residual_rms_norm"};
/// Names of the flag bits, lowest first.
inline constexpr std::array<const char*, 6> kGemmFlagNames = {"bf16",    "round",   "prepared_a",
                                                              "prepared_b", "slabs_a", "prepared_out"};

struct GemmParams {
  GemmForm form = GemmForm::kXWt;
  GemmEpilogue epilogue = GemmEpilogue::kNone;
  int64_t flags = 0;
  int64_t M = 0, N = 0, K = 0;
  double eps = 0.0;

  bool Has(int64_t flag) const { return (flags & flag) != 0; }
};

/// "<form> <epilogue> <flag>|<flag>..." ("-" for no flags): how launch lists and the
/// lowering's tests name a variant, e.g. "xwt relu_square bf16|round|prepared_out".
inline std::string GemmDescription(const GemmParams& p) {
  const auto form = static_cast<size_t>(p.form), epilogue = static_cast<size_t>(p.epilogue);
  std::string s = form < kGemmFormNames.size() ? kGemmFormNames[form] : "?";
  s += ' ';
  s += epilogue < kGemmEpilogueNames.size() ? kGemmEpilogueNames[epilogue] : "?";
  s += ' ';
  std::string flags;
  for (size_t bit = 0; bit < kGemmFlagNames.size(); ++bit) {
    if ((p.flags >> bit) & 1) flags += (flags.empty() ? "" : "|") + std::string(kGemmFlagNames[bit]);
  }
  return s + (flags.empty() ? "-" : flags);
}

/// The buffer slots of a launch, in argument order.
enum class GemmSlot : int { kA, kB, kAux, kC, kOut0, kOut1 };
inline constexpr int kGemmSlotCount = 6;
inline constexpr std::array<const char*, kGemmSlotCount> kGemmSlotNames = {"a", "b", "aux", "c", "out0", "out1"};

constexpr bool GemmHasSlot(GemmEpilogue e, GemmSlot s) {
  switch (s) {
    case GemmSlot::kA:
    case GemmSlot::kB:
    case GemmSlot::kC:
      return true;
    case GemmSlot::kAux:
      return e == GemmEpilogue::kReluSquareGrad || e == GemmEpilogue::kResidualRmsNorm;
    case GemmSlot::kOut0:
      return e != GemmEpilogue::kNone;
    case GemmSlot::kOut1:
      return e == GemmEpilogue::kResidualRmsNorm;
  }
  return false;
}

/// Elements of a slot's buffer (rows x columns) for `p`'s shape.
constexpr int64_t GemmSlotElements(const GemmParams& p, GemmSlot s) {
  const int64_t mn = p.M * p.N, mk = p.M * p.K, nk = p.N * p.K;
  switch (s) {
    case GemmSlot::kA:
      return p.form == GemmForm::kXWt ? mk : mn;
    case GemmSlot::kB:
      return p.form == GemmForm::kDyTX ? mk : nk;
    case GemmSlot::kAux:
    case GemmSlot::kC:
    case GemmSlot::kOut0:
    case GemmSlot::kOut1:
      return p.form == GemmForm::kXWt ? mn : p.form == GemmForm::kDyW ? mk : nk;
  }
  return 0;
}

/// Null when the driver runs `p` (with `f64`: on double values), else why not. The lowering
/// emits only supported parameters; the driver checks them once, when a launch is recorded.
constexpr const char* GemmUnsupported(const GemmParams& p, bool f64) {
  const int64_t f = p.flags;
  if ((f & ~kGemmAllFlags) != 0) return "unknown flag bits";
  if (p.M < 0 || p.N < 0 || p.K < 0) return "negative dims";
  const bool bf16 = (f & kGemmBf16Inputs) != 0;
  if (!bf16 && f != 0) return "rounding and prepared operands are bf16 autocast's (kGemmBf16Inputs)";
  if (bf16 && f64) return "bf16 inputs are f32 buffers";
  const int64_t prepared_out = f & kGemmPreparedOut;
  switch (p.epilogue) {
    case GemmEpilogue::kNone:
      if (prepared_out) return "no epilogue output to prepare";
      break;
    case GemmEpilogue::kReluSquare:
      if (p.form != GemmForm::kXWt) return "relu² follows the forward product";
      if (bf16 && !(f & kGemmRoundOutput)) return "bf16 relu² reads the rounded product";
      break;
    case GemmEpilogue::kReluSquareGrad:
      if (p.form != GemmForm::kDyW || !bf16 || !(f & kGemmRoundOutput)) {
        return "relu²'s gradient follows the rounded bf16 input-gradient product";
      }
      if (f & kGemmPreparedA) return "relu²'s gradient reads an f32 dy";
      break;
    case GemmEpilogue::kResidualRmsNorm:
      if (p.form != GemmForm::kXWt || !bf16 || !(f & kGemmRoundOutput)) {
        return "the residual norm follows the rounded bf16 forward product";
      }
      break;
    default:
      return "unknown epilogue";
  }
  switch (p.form) {
    case GemmForm::kXWt:
      if ((f & (kGemmPreparedB | kGemmSlabsA)) != 0) return "only the weight gradient reads b prepared or a in slabs";
      if ((f & kGemmPreparedA) && !(f & kGemmRoundOutput)) return "a prepared x is read by the rounded product";
      break;
    case GemmForm::kDyW:
      if ((f & (kGemmPreparedB | kGemmSlabsA)) != 0) return "only the weight gradient reads b prepared or a in slabs";
      break;
    case GemmForm::kDyTX:
      if (f & kGemmRoundOutput) return "the weight gradient is f32";
      if ((f & kGemmSlabsA) && (f & (kGemmPreparedA | kGemmPreparedB))) return "dy in slabs is read with an f32 x";
      break;
    default:
      return "unknown form";
  }
  return nullptr;
}

}  // namespace gpt_sft::ukernel

#endif  // GPT_SFT_UKERNEL_GEMM_H_
