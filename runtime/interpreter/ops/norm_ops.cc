// gpt.rms_norm and gpt.rms_norm_grad over the last dim, through
// runtime/kernels/cpu/rms_norm.h.
#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/kernels/cpu/rms_norm.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace k = ::gpt_sft::runtime::kernels;

absl::Status RmsNorm(OpContext& ctx) {
  auto op = ctx.As<gpt::RmsNormOp>();
  const Tensor& x = ctx.Get(op.getX());
  if (x.rank() < 1) return ctx.Error("x must have a last dim to normalise, got " + x.ShapeString());
  const double eps = op.getEps().convertToDouble();
  auto y = ctx.AllocateResult(op.getResult(), x.shape());
  if (!y.ok()) return y.status();
  return DispatchFloat(ctx, "x", x, [&](auto zero) {
    using T = decltype(zero);
    k::RmsNorm(x.data<T>(), y->template data<T>(), LeadingElements(x), x.dim(x.rank() - 1), T(eps));
    return absl::OkStatus();
  });
}

absl::Status RmsNormGrad(OpContext& ctx) {
  auto op = ctx.As<gpt::RmsNormGradOp>();
  const Tensor& x = ctx.Get(op.getX());
  const Tensor& dy = ctx.Get(op.getDy());
  if (absl::Status s = RequireSameShape(ctx, "x and dy", x, dy); !s.ok()) return s;
  if (x.rank() < 1) return ctx.Error("x must have a last dim, got " + x.ShapeString());
  const double eps = op.getEps().convertToDouble();
  auto dx = ctx.AllocateResult(op.getResult(), x.shape());
  if (!dx.ok()) return dx.status();
  return DispatchFloat(ctx, "x", x, [&](auto zero) {
    using T = decltype(zero);
    k::RmsNormGrad(x.data<T>(), dy.data<T>(), dx->template data<T>(), LeadingElements(x), x.dim(x.rank() - 1),
                   T(eps));
    return absl::OkStatus();
  });
}

}  // namespace

void RegisterNormOps(OpRegistry& registry) {
  registry.Register("gpt.rms_norm", RmsNorm);
  registry.Register("gpt.rms_norm_grad", RmsNormGrad);
}

}  // namespace gpt_sft::runtime::interp
