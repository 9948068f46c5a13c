// gpt.matmul (x [..., K] @ w [N, K]^T) and gpt.matmul_weight_grad (dy [..., N]^T x [..., K]
// over all leading dims), through runtime/kernels/cpu/matmul.h (OpenBLAS), or under bf16
// autocast runtime/kernels/cpu/matmul_bf16.h (oneDNN's bf16 kernels where the CPU has them).
#include "ir/autocast.h"
#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace k = ::gpt_sft::runtime::kernels;

/// Under bf16 autocast an f32 matmul reads bf16 values only (ir/autocast.h): it
/// runs matmul_bf16.h's kernel, as the compiled cpu step's matmul_bf16 builtins do.
bool Bf16Inputs(mlir::Operation* op, const Tensor& x) {
  return x.dtype() == DType::kF32 && ::gpt_sft::compiler::UnderBf16Autocast(op);
}

absl::Status Matmul(OpContext& ctx) {
  auto op = ctx.As<gpt::MatmulOp>();
  const Tensor& x = ctx.Get(op.getX());
  const Tensor& w = ctx.Get(op.getW());
  if (x.rank() < 1 || w.rank() != 2 || x.dim(x.rank() - 1) != w.dim(1) || x.dtype() != w.dtype()) {
    return ctx.Error("expected x [..., K] and w [N, K] of one element type, got x " + x.ShapeString() +
                     " and w " + w.ShapeString());
  }
  const int64_t M = LeadingElements(x), N = w.dim(0), K = w.dim(1);
  Shape shape = x.shape();
  shape.back() = N;
  auto y = ctx.AllocateResult(op.getResult(), shape);
  if (!y.ok()) return y.status();
  if (Bf16Inputs(op, x)) {
    k::MatmulBf16Inputs(x.data<float>(), w.data<float>(), y->template data<float>(), M, N, K);
    return absl::OkStatus();
  }
  return DispatchFloat(ctx, "x", x, [&](auto zero) {
    using T = decltype(zero);
    k::Matmul(x.data<T>(), w.data<T>(), y->template data<T>(), M, N, K);
    return absl::OkStatus();
  });
}

absl::Status MatmulWeightGrad(OpContext& ctx) {
  auto op = ctx.As<gpt::MatmulWeightGradOp>();
  const Tensor& dy = ctx.Get(op.getDy());
  const Tensor& x = ctx.Get(op.getX());
  bool ok = dy.rank() >= 1 && dy.rank() == x.rank() && dy.dtype() == x.dtype();
  for (int64_t i = 0; ok && i + 1 < dy.rank(); ++i) ok = dy.dim(i) == x.dim(i);
  if (!ok) {
    return ctx.Error("dy [..., N] and x [..., K] must share the leading dims and element type, got dy " +
                     dy.ShapeString() + " and x " + x.ShapeString());
  }
  const int64_t M = LeadingElements(x), N = dy.dim(dy.rank() - 1), K = x.dim(x.rank() - 1);
  auto dw = ctx.AllocateResult(op.getResult(), {N, K});
  if (!dw.ok()) return dw.status();
  if (Bf16Inputs(op, dy)) {
    k::MatmulGradWeightBf16Inputs(dy.data<float>(), x.data<float>(), dw->template data<float>(), M, N, K,
                                  /*accumulate=*/false);
    return absl::OkStatus();
  }
  return DispatchFloat(ctx, "dy", dy, [&](auto zero) {
    using T = decltype(zero);
    k::MatmulGradWeight(dy.data<T>(), x.data<T>(), dw->template data<T>(), M, N, K, /*accumulate=*/false);
    return absl::OkStatus();
  });
}

}  // namespace

void RegisterMatmulOps(OpRegistry& registry) {
  registry.Register("gpt.matmul", Matmul);
  registry.Register("gpt.matmul_weight_grad", MatmulWeightGrad);
}

}  // namespace gpt_sft::runtime::interp
