// gpt.add, gpt.mul, gpt.relu_square, gpt.softcap and their grads: one shape in, that shape
// out (no broadcasting), through runtime/kernels/cpu/pointwise.h; gpt.round_bf16 through
// runtime/kernels/cpu/round_bf16.h.
#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace k = ::gpt_sft::runtime::kernels;

/// y = kernel(a, b, y, n) for two operands of one shape.
template <typename Kernel>
absl::Status RunBinary(OpContext& ctx, mlir::Value lhs, mlir::Value rhs, const std::string& what,
                       Kernel kernel) {
  const Tensor& a = ctx.Get(lhs);
  const Tensor& b = ctx.Get(rhs);
  if (absl::Status s = RequireSameShape(ctx, what, a, b); !s.ok()) return s;
  auto y = ctx.AllocateResult(ctx.op()->getResult(0), a.shape());
  if (!y.ok()) return y.status();
  return DispatchFloat(ctx, what, a, [&](auto zero) {
    using T = decltype(zero);
    kernel(a.data<T>(), b.data<T>(), y->template data<T>(), a.numel());
    return absl::OkStatus();
  });
}

/// In place into an operand nothing reads afterwards and the run alone holds (the residual
/// stream, sums of cotangents, the accumulation into donated gradient buffers), as PyTorch's
/// `+=` on .grad does: one buffer fewer per add, no extra pass over memory.
absl::Status AddInPlace(OpContext& ctx, gpt::AddOp op, mlir::Value into) {
  const Tensor& a = ctx.Get(op.getLhs());
  const Tensor& b = ctx.Get(op.getRhs());
  if (absl::Status s = RequireSameShape(ctx, "lhs and rhs", a, b); !s.ok()) return s;
  Tensor out = ctx.Get(into);
  absl::Status status = DispatchFloat(ctx, "lhs and rhs", a, [&](auto zero) {
    using T = decltype(zero);
    k::Add(a.data<T>(), b.data<T>(), out.data<T>(), a.numel());
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return ctx.SetResult(op.getResult(), std::move(out));
}

absl::Status Add(OpContext& ctx) {
  auto op = ctx.As<gpt::AddOp>();
  for (mlir::Value operand : {op.getLhs(), op.getRhs()}) {
    if (ctx.CanOverwrite(operand)) return AddInPlace(ctx, op, operand);
  }
  return RunBinary(ctx, op.getLhs(), op.getRhs(), "lhs and rhs",
                               [](auto* a, auto* b, auto* y, int64_t n) { k::Add(a, b, y, n); });
}

absl::Status Mul(OpContext& ctx) {
  auto op = ctx.As<gpt::MulOp>();
  return RunBinary(ctx, op.getLhs(), op.getRhs(), "lhs and rhs",
                               [](auto* a, auto* b, auto* y, int64_t n) { k::Mul(a, b, y, n); });
}

absl::Status ReluSquareGrad(OpContext& ctx) {
  auto op = ctx.As<gpt::ReluSquareGradOp>();
  return RunBinary(
      ctx, op.getX(), op.getDy(), "x and dy",
      [](auto* x, auto* dy, auto* dx, int64_t n) { k::ReluSquareGrad(x, dy, dx, n); });
}

absl::Status SoftcapGrad(OpContext& ctx) {
  auto op = ctx.As<gpt::SoftcapGradOp>();
  const double cap = op.getCap().convertToDouble();
  return RunBinary(ctx, op.getY(), op.getDy(), "y and dy",
                                       [cap](auto* y, auto* dy, auto* dx, int64_t n) {
                                         using T = std::remove_const_t<std::remove_pointer_t<decltype(y)>>;
                                         k::SoftcapGrad(y, dy, dx, n, T(cap));
                                       });
}

absl::Status ReluSquare(OpContext& ctx) {
  const Tensor& x = ctx.Get(ctx.As<gpt::ReluSquareOp>().getX());
  auto y = ctx.AllocateResult(ctx.op()->getResult(0), x.shape());
  if (!y.ok()) return y.status();
  return DispatchFloat(ctx, "x", x, [&](auto zero) {
    using T = decltype(zero);
    k::ReluSquare(x.data<T>(), y->template data<T>(), x.numel());
    return absl::OkStatus();
  });
}

absl::Status Softcap(OpContext& ctx) {
  auto op = ctx.As<gpt::SoftcapOp>();
  const Tensor& x = ctx.Get(op.getX());
  const double cap = op.getCap().convertToDouble();
  auto y = ctx.AllocateResult(op.getResult(), x.shape());
  if (!y.ok()) return y.status();
  if (op.getRoundBf16()) {  // nanochat's three bf16 ops; f32 only (the verifier's rule)
    if (x.dtype() != DType::kF32) return ctx.Error("round_bf16 needs f32 x, got " + x.ShapeString());
    k::SoftcapBf16(x.data<float>(), y->data<float>(), x.numel(), float(cap));
    return absl::OkStatus();
  }
  return DispatchFloat(ctx, "x", x, [&](auto zero) {
    using T = decltype(zero);
    k::Softcap(x.data<T>(), y->template data<T>(), x.numel(), T(cap));
    return absl::OkStatus();
  });
}

/// In place when the run holds the only reference to x and nothing reads it afterwards
/// (autocast rounds the output of the op just before, so this is the common case).
absl::Status RoundBf16(OpContext& ctx) {
  auto op = ctx.As<gpt::RoundBf16Op>();
  const Tensor& x = ctx.Get(op.getX());
  if (x.dtype() != DType::kF32) return ctx.Error("x must be f32, got " + x.ShapeString());
  if (ctx.CanOverwrite(op.getX())) {
    Tensor out = ctx.Get(op.getX());
    k::RoundBf16(out.data<float>(), out.data<float>(), out.numel());
    return ctx.SetResult(op.getResult(), std::move(out));
  }
  auto y = ctx.AllocateResult(op.getResult(), x.shape());
  if (!y.ok()) return y.status();
  k::RoundBf16(x.data<float>(), y->data<float>(), x.numel());
  return absl::OkStatus();
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& registry) {
  registry.Register("gpt.add", Add);
  registry.Register("gpt.mul", Mul);
  registry.Register("gpt.relu_square", ReluSquare);
  registry.Register("gpt.relu_square_grad", ReluSquareGrad);
  registry.Register("gpt.softcap", Softcap);
  registry.Register("gpt.softcap_grad", SoftcapGrad);
  registry.Register("gpt.round_bf16", RoundBf16);
}

}  // namespace gpt_sft::runtime::interp
