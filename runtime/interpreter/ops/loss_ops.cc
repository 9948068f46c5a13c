// gpt.cross_entropy (mean over counted targets, rank-0 result) and gpt.cross_entropy_grad,
// through runtime/kernels/cpu/cross_entropy.h, whose ignore index is -1: targets equal to
// another ignore_index are mapped to -1 in a copy first. Targets are checked against V.
#include <vector>

#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/kernels/cpu/cross_entropy.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace k = ::gpt_sft::runtime::kernels;

/// Checks logits [N, V] and targets [N] and returns targets with ignore_index as -1
/// (pointing into `storage` only when a copy was needed).
absl::StatusOr<const int32_t*> KernelTargets(const OpContext& ctx, const Tensor& logits, const Tensor& targets,
                                             int64_t ignore_index, std::vector<int32_t>& storage) {
  if (logits.rank() != 2 || targets.rank() != 1 || targets.dtype() != DType::kI32 ||
      targets.dim(0) != logits.dim(0)) {
    return ctx.Error("expected logits [N, V] and targets [N] i32, got " + logits.ShapeString() + " and " +
                     targets.ShapeString());
  }
  const int64_t V = logits.dim(1);
  const int32_t* t = targets.data<int32_t>();
  for (int64_t i = 0; i < targets.numel(); ++i) {
    if (t[i] != ignore_index && (t[i] < 0 || t[i] >= V)) {
      return ctx.Error(absl::StrCat("target ", t[i], " at row ", i, " is neither ignore_index ", ignore_index,
                                    " nor in [0, ", V, ")"));
    }
  }
  if (ignore_index == -1) return t;
  storage.assign(t, t + targets.numel());
  for (int32_t& v : storage) v = v == ignore_index ? -1 : v;
  return storage.data();
}

absl::Status CrossEntropy(OpContext& ctx) {
  auto op = ctx.As<gpt::CrossEntropyOp>();
  const Tensor& logits = ctx.Get(op.getLogits());
  std::vector<int32_t> storage;
  auto targets = KernelTargets(ctx, logits, ctx.Get(op.getTargets()), op.getIgnoreIndex(), storage);
  if (!targets.ok()) return targets.status();
  auto loss = ctx.AllocateResult(op.getResult(), {});
  if (!loss.ok()) return loss.status();
  return DispatchFloat(ctx, "logits", logits, [&](auto zero) {
    using T = decltype(zero);
    *loss->template data<T>() = T(k::CrossEntropy(logits.data<T>(), *targets, logits.dim(0), logits.dim(1)).loss);
    return absl::OkStatus();
  });
}

absl::Status CrossEntropyGrad(OpContext& ctx) {
  auto op = ctx.As<gpt::CrossEntropyGradOp>();
  const Tensor& logits = ctx.Get(op.getLogits());
  const Tensor& dloss = ctx.Get(op.getDloss());
  std::vector<int32_t> storage;
  auto targets = KernelTargets(ctx, logits, ctx.Get(op.getTargets()), op.getIgnoreIndex(), storage);
  if (!targets.ok()) return targets.status();
  if (dloss.numel() != 1 || dloss.dtype() == DType::kI32) {
    return ctx.Error("dloss must be a rank-0 float tensor, got " + dloss.ShapeString());
  }
  auto dlogits = ctx.AllocateResult(op.getResult(), logits.shape());
  if (!dlogits.ok()) return dlogits.status();
  return DispatchFloat(ctx, "logits", logits, [&](auto zero) {
    using T = decltype(zero);
    k::CrossEntropyGrad(logits.data<T>(), *targets, logits.dim(0), logits.dim(1), dloss.ScalarAsDouble(),
                        dlogits->template data<T>());
    return absl::OkStatus();
  });
}

}  // namespace

void RegisterLossOps(OpRegistry& registry) {
  registry.Register("gpt.cross_entropy", CrossEntropy);
  registry.Register("gpt.cross_entropy_grad", CrossEntropyGrad);
}

}  // namespace gpt_sft::runtime::interp
