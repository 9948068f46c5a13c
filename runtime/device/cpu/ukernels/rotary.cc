// The rotary family's driver side: the params name the kernel the interpreter runs for the
// same ops (rotary.h, rotary_rms_norm.h).
#include "runtime/device/cpu/ukernels/rotary.h"

#include <type_traits>

#include "runtime/device/cpu/builtin_call.h"
#include "runtime/kernels/cpu/rotary.h"
#include "runtime/kernels/cpu/rotary_rms_norm.h"
#include "ukernel/rotary.h"

namespace gpt_sft::runtime::device::cpu {
namespace {

namespace k = ::gpt_sft::runtime::kernels;
namespace uk = ::gpt_sft::ukernel;
using uk::RotaryOp;
using uk::RotarySlot;

template <typename T>
struct RotaryCall {
  static constexpr const char* kName = "rotary";
  uk::RotaryParams p;
  const T *in = nullptr, *dy = nullptr;
  const int32_t* positions = nullptr;
  const float *cos = nullptr, *sin = nullptr;
  T *rot = nullptr, *out = nullptr;

  explicit RotaryCall(ArgReader& r) {
    p.op = static_cast<RotaryOp>(r.Int("op"));
    p.flags = r.Int("flags");
    p.B = r.Int("B"), p.T = r.Int("T"), p.H = r.Int("H"), p.D = r.Int("D"), p.P = r.Int("P");
    p.eps = r.Float("eps");
    if (const char* why = uk::RotaryUnsupported(p, std::is_same_v<T, double>)) {
      r.Fail(why);
      return;
    }
    const int64_t n = p.HeadElements();
    auto has = [&](RotarySlot s) { return uk::RotaryHasSlot(p.op, s); };
    auto name = [](RotarySlot s) { return uk::kRotarySlotNames[static_cast<int>(s)]; };
    in = r.Buffer<const T>(n, name(RotarySlot::kIn));
    if (has(RotarySlot::kDy)) dy = r.Buffer<const T>(n, name(RotarySlot::kDy));
    positions = r.Buffer<const int32_t>(p.B * p.T, name(RotarySlot::kPositions));
    cos = r.Buffer<const float>(p.TableElements(), name(RotarySlot::kCos));
    sin = r.Buffer<const float>(p.TableElements(), name(RotarySlot::kSin));
    if (has(RotarySlot::kRot)) rot = r.Buffer<T>(n, name(RotarySlot::kRot));
    out = r.Buffer<T>(n, name(RotarySlot::kOut));
  }

  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    // Positions outside the tables are data the types cannot rule out: checked every run
    // (B*T ints, far cheaper than the rotation).
    if (absl::Status st = CheckIds(positions, p.B * p.T, 0, p.P, "rotary position"); !st.ok()) return st;
    const k::RotaryShape s{p.B, p.T, p.H, p.D};
    const bool bf16 = p.Has(uk::kRotaryBf16);
    switch (p.op) {
      case RotaryOp::kRotary:
      case RotaryOp::kRotaryGrad:
        k::RotaryFromTables(in, positions, cos, sin, out, s, p.op == RotaryOp::kRotaryGrad,
                            bf16 ? k::RotaryRounding::kBf16 : k::RotaryRounding::kNone);
        break;
      case RotaryOp::kRotaryRmsNorm:
        if constexpr (std::is_same_v<T, float>) {
          if (bf16) {
            k::RotaryRmsNormRoundBf16(in, positions, cos, sin, rot, out, s, static_cast<float>(p.eps));
            break;
          }
        }
        k::RotaryRmsNorm(in, positions, cos, sin, rot, out, s, static_cast<T>(p.eps));
        break;
      case RotaryOp::kRmsNormRotaryGrad:
        if constexpr (std::is_same_v<T, float>) {
          if (bf16) {
            k::RmsNormRotaryGradOfRoundedDyBf16(in, dy, positions, cos, sin, out, s, static_cast<float>(p.eps));
            break;
          }
        }
        k::RmsNormRotaryGrad(in, dy, positions, cos, sin, out, s, static_cast<T>(p.eps));
        break;
    }
    return absl::OkStatus();
  }
};

}  // namespace

HostBuiltin RotaryBuiltin(std::string_view name, bool f64) {
  return f64 ? Entry<RotaryCall<double>>(name) : Entry<RotaryCall<float>>(name);
}

}  // namespace gpt_sft::runtime::device::cpu
