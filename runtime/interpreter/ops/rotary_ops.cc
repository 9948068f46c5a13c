// gpt.rotary and gpt.rotary_grad on x [B, T, H, D] with optional positions [B, T], through
// runtime/kernels/cpu/rotary.h. Without positions, position t is t (an iota, built here).
#include <vector>

#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/kernels/cpu/rotary.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace k = ::gpt_sft::runtime::kernels;

/// Shared by both directions: checks, then kernel(in, positions, out, shape, base).
/// round_bf16 (nanochat's bf16 rotary) runs on f32 only; the verifier has said so.
template <typename Kernel>
absl::Status RunRotary(OpContext& ctx, mlir::Value in_value, mlir::Value positions_value, double base,
                       Kernel kernel) {
  const Tensor& in = ctx.Get(in_value);
  const Tensor& positions = ctx.Get(positions_value);
  if (absl::Status s = RequireRank(ctx, "x", in, 4, "[B, T, H, D]"); !s.ok()) return s;
  const k::RotaryShape shape{in.dim(0), in.dim(1), in.dim(2), in.dim(3)};
  if (shape.D % 2 != 0) return ctx.Error("head dim D must be even, got " + in.ShapeString());
  std::vector<int32_t> iota;
  const int32_t* pos = nullptr;
  if (positions.defined()) {
    if (positions.dtype() != DType::kI32 || positions.shape() != Shape{shape.B, shape.T}) {
      return ctx.Error("positions must be [B, T] i32 of x " + in.ShapeString() + ", got " +
                       positions.ShapeString());
    }
    pos = positions.data<int32_t>();
  } else {
    iota.resize(shape.B * shape.T);
    for (int64_t i = 0; i < shape.B * shape.T; ++i) iota[i] = static_cast<int32_t>(i % shape.T);
    pos = iota.data();
  }
  auto out = ctx.AllocateResult(ctx.op()->getResult(0), in.shape());
  if (!out.ok()) return out.status();
  return DispatchFloat(ctx, "x", in, [&](auto zero) {
    using T = decltype(zero);
    kernel(in.data<T>(), pos, out->template data<T>(), shape, base);
    return absl::OkStatus();
  });
}

k::RotaryRounding Rounding(bool round_bf16) {
  return round_bf16 ? k::RotaryRounding::kBf16 : k::RotaryRounding::kNone;
}

absl::Status Rotary(OpContext& ctx) {
  auto op = ctx.As<gpt::RotaryOp>();
  const k::RotaryRounding rounding = Rounding(op.getRoundBf16());
  return RunRotary(ctx, op.getX(), op.getPositions(), op.getBase().convertToDouble(),
                   [rounding](auto* x, const int32_t* pos, auto* y, k::RotaryShape s, double base) {
                     k::Rotary(x, pos, y, s, base, rounding);
                   });
}

absl::Status RotaryGrad(OpContext& ctx) {
  auto op = ctx.As<gpt::RotaryGradOp>();
  const k::RotaryRounding rounding = Rounding(op.getRoundBf16());
  return RunRotary(ctx, op.getDy(), op.getPositions(), op.getBase().convertToDouble(),
                   [rounding](auto* dy, const int32_t* pos, auto* dx, k::RotaryShape s, double base) {
                     k::RotaryGrad(dy, pos, dx, s, base, rounding);
                   });
}

}  // namespace

void RegisterRotaryOps(OpRegistry& registry) {
  registry.Register("gpt.rotary", Rotary);
  registry.Register("gpt.rotary_grad", RotaryGrad);
}

}  // namespace gpt_sft::runtime::interp
