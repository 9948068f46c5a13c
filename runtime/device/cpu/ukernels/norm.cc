// The row-norm family's driver side: the params name the kernel the interpreter runs for the
// same ops (rms_norm.h, rms_norm_round_bf16.h, residual_rms_norm.h); the kernels vectorise
// per ISA themselves.
#include "runtime/device/cpu/ukernels/norm.h"

#include <array>
#include <type_traits>

#include "runtime/device/cpu/builtin_call.h"
#include "runtime/kernels/cpu/residual_rms_norm.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/rms_norm_round_bf16.h"
#include "ukernel/norm.h"

namespace gpt_sft::runtime::device::cpu {
namespace {

namespace k = ::gpt_sft::runtime::kernels;
namespace uk = ::gpt_sft::ukernel;
using uk::NormOp;
using uk::NormSlot;

static_assert(uk::kNormMaxGradAddDim == k::kMaxResidualRmsNormDim, "one limit, the kernel's");

template <typename T>
struct NormCall {
  static constexpr const char* kName = "norm";
  uk::NormParams p;
  std::array<T*, uk::kNormSlotCount> slot{};

  explicit NormCall(ArgReader& r) {
    p.op = static_cast<NormOp>(r.Int("op"));
    p.flags = r.Int("flags");
    p.rows = r.Int("rows"), p.dim = r.Int("dim");
    p.eps = r.Float("eps");
    if (const char* why = uk::NormUnsupported(p, std::is_same_v<T, double>)) {
      r.Fail(why);
      return;
    }
    for (int s = 0; s < uk::kNormSlotCount; ++s) {
      if (uk::NormHasSlot(p.op, static_cast<NormSlot>(s))) slot[s] = r.Buffer<T>(p.rows * p.dim, uk::kNormSlotNames[s]);
    }
  }

  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    const T *in0 = slot[0], *in1 = slot[1], *in2 = slot[2];
    T *out0 = slot[3], *out1 = slot[4];
    const int64_t rows = p.rows, dim = p.dim;
    const T eps = static_cast<T>(p.eps);
    if constexpr (std::is_same_v<T, float>) {
      if (p.flags != 0) {
        switch (p.op) {
          case NormOp::kRmsNorm:
            k::RmsNormRoundBf16(in0, out0, rows, dim, eps);
            break;
          case NormOp::kRmsNormGrad:
            if (p.Has(uk::kNormRoundDy)) {
              k::RmsNormGradOfRoundedDy(in0, in1, out0, rows, dim, eps, p.Has(uk::kNormRoundOutput));
            } else {
              k::RmsNormGradRoundBf16(in0, in1, out0, rows, dim, eps);
            }
            break;
          case NormOp::kRmsNormGradAdd:
            k::RmsNormGradAddRoundBf16(in0, in1, in2, out0, rows, dim, eps);
            break;
          case NormOp::kAddRmsNorm:
            break;  // refused by NormUnsupported
        }
        return absl::OkStatus();
      }
    }
    switch (p.op) {
      case NormOp::kRmsNorm:
        k::RmsNorm(in0, out0, rows, dim, eps);
        break;
      case NormOp::kRmsNormGrad:
        k::RmsNormGrad(in0, in1, out0, rows, dim, eps);
        break;
      case NormOp::kAddRmsNorm:
        k::AddRmsNorm(in0, in1, out0, out1, rows, dim, eps);
        break;
      case NormOp::kRmsNormGradAdd:
        k::RmsNormGradAdd(in0, in1, in2, out0, rows, dim, eps);
        break;
    }
    return absl::OkStatus();
  }
};

}  // namespace

HostBuiltin NormBuiltin(std::string_view name, bool f64) {
  return f64 ? Entry<NormCall<double>>(name) : Entry<NormCall<float>>(name);
}

}  // namespace gpt_sft::runtime::device::cpu
