// The attention family's driver side: the params name the kernel the interpreter runs for the
// same op (attention.h: f32/f64 on the vector units, bf16 inputs on AMX tiles or AVX512_BF16
// dot products, chosen there once per process). Workspace: what that kernel needs on the
// driver's threads, sized when the launch is recorded.
#include "runtime/device/cpu/ukernels/attention.h"

#include <array>
#include <type_traits>

#include "runtime/device/cpu/builtin_call.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "ukernel/attention.h"

namespace gpt_sft::runtime::device::cpu {
namespace {

namespace k = ::gpt_sft::runtime::kernels;
namespace uk = ::gpt_sft::ukernel;
using uk::AttentionOp;
using uk::AttentionSlot;

template <typename T>
struct AttentionCall {
  static constexpr const char* kName = "attention";
  uk::AttentionParams p;
  k::AttentionShape s{};
  std::array<void*, uk::kAttentionSlotCount> slot{};

  explicit AttentionCall(ArgReader& r) {
    p.op = static_cast<AttentionOp>(r.Int("op"));
    p.flags = r.Int("flags");
    p.B = r.Int("B"), p.T = r.Int("T"), p.H = r.Int("H"), p.Hkv = r.Int("Hkv"), p.D = r.Int("D");
    if (const char* why = uk::AttentionUnsupported(p, std::is_same_v<T, double>)) {
      r.Fail(why);
      return;
    }
    s.B = p.B, s.T = p.T, s.H = p.H, s.Hkv = p.Hkv, s.D = p.D;
    for (int i = 0; i < uk::kAttentionSlotCount; ++i) {
      const auto as = static_cast<AttentionSlot>(i);
      if (!uk::AttentionHasSlot(p, as)) continue;
      const int64_t n = uk::AttentionSlotElements(p, as);
      slot[i] = as == AttentionSlot::kSegments ? static_cast<void*>(r.Buffer<int32_t>(n, uk::kAttentionSlotNames[i]))
                                               : static_cast<void*>(r.Buffer<T>(n, uk::kAttentionSlotNames[i]));
    }
  }
  T* at(AttentionSlot s) const { return static_cast<T*>(slot[static_cast<int>(s)]); }

  int64_t Workspace(int) const {
    const bool seg = p.Has(uk::kAttentionSegments), bf16 = p.Has(uk::kAttentionBf16Inputs);
    if (p.op == AttentionOp::kForward) {
      return bf16 ? k::AttentionBf16InputsWorkspaceBytes(s, seg) : k::AttentionWorkspaceBytes<T>(s, seg);
    }
    return bf16 ? k::AttentionGradBf16InputsWorkspaceBytes(s, seg) : k::AttentionGradWorkspaceBytes<T>(s, seg);
  }

  absl::Status Run(k::Workspace ws) const {
    const T *q = at(AttentionSlot::kQ), *kk = at(AttentionSlot::kK), *v = at(AttentionSlot::kV);
    const auto* segments = static_cast<const int32_t*>(slot[static_cast<int>(AttentionSlot::kSegments)]);
    T *out = at(AttentionSlot::kOut), *lse = at(AttentionSlot::kLse);
    if (p.op == AttentionOp::kForward) {
      if constexpr (std::is_same_v<T, float>) {
        if (p.Has(uk::kAttentionBf16Inputs)) {
          k::AttentionBf16Inputs(q, kk, v, segments, s, out, lse, ws);
          return absl::OkStatus();
        }
      }
      k::Attention(q, kk, v, segments, s, out, lse, ws);
      return absl::OkStatus();
    }
    const T* dout = at(AttentionSlot::kDout);
    T *dq = at(AttentionSlot::kDq), *dk = at(AttentionSlot::kDk), *dv = at(AttentionSlot::kDv);
    if constexpr (std::is_same_v<T, float>) {
      if (p.Has(uk::kAttentionPreparedDv)) {
        k::AttentionGradBf16InputsPreparedDv(q, kk, v, segments, s, out, lse, dout, dq, dk, k::ActiveBf16Gemm(), dv, ws);
        return absl::OkStatus();
      }
      if (p.Has(uk::kAttentionBf16Inputs)) {
        k::AttentionGradBf16Inputs(q, kk, v, segments, s, out, lse, dout, dq, dk, dv, ws);
        return absl::OkStatus();
      }
    }
    k::AttentionGrad(q, kk, v, segments, s, out, lse, dout, dq, dk, dv, ws);
    return absl::OkStatus();
  }
};

}  // namespace

HostBuiltin AttentionBuiltin(std::string_view name, bool f64) {
  return f64 ? Entry<AttentionCall<double>>(name) : Entry<AttentionCall<float>>(name);
}

}  // namespace gpt_sft::runtime::device::cpu
