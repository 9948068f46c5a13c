// gpt.adamw_update and gpt.muon_update through runtime/kernels/cpu/optimizers.h, whose
// kernels update in place. The ops have value semantics, so each state operand is
// updated in its own buffer when the run may overwrite it (OpContext::CanOverwrite: last
// use, sole reference or donated) and in a copy otherwise. lr and step are read from
// their rank-0 operands at run time.
#include <cmath>

#include "ir/autocast.h"
#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/kernels/cpu/optimizers.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace k = ::gpt_sft::runtime::kernels;

/// `value`'s buffer when the run may overwrite it, else a copy.
absl::StatusOr<Tensor> Writable(const OpContext& ctx, mlir::Value value) {
  const Tensor& t = ctx.Get(value);
  if (ctx.CanOverwrite(value)) return t;
  Tensor copy = t.Clone(ctx.allocator());
  if (!copy.defined()) return ctx.Error("out of memory copying " + t.ShapeString());
  return copy;
}

absl::StatusOr<double> ScalarOperand(const OpContext& ctx, const std::string& name, const Tensor& t) {
  if (t.rank() != 0 || t.dtype() == DType::kI32) {
    return ctx.Error(name + " must be a rank-0 float tensor, got " + t.ShapeString());
  }
  return t.ScalarAsDouble();
}

absl::Status AdamwUpdate(OpContext& ctx) {
  auto op = ctx.As<gpt::AdamwUpdateOp>();
  const Tensor& grad = ctx.Get(op.getGrad());
  for (auto [name, value] : {std::pair<const char*, mlir::Value>{"param", op.getParam()},
                             {"exp_avg", op.getExpAvg()},
                             {"exp_avg_sq", op.getExpAvgSq()}}) {
    if (absl::Status s = RequireSameShape(ctx, std::string("grad and ") + name, grad, ctx.Get(value)); !s.ok()) {
      return s;
    }
  }
  auto lr = ScalarOperand(ctx, "lr", ctx.Get(op.getLr()));
  if (!lr.ok()) return lr.status();
  auto step = ScalarOperand(ctx, "step", ctx.Get(op.getStep()));
  if (!step.ok()) return step.status();
  if (*step < 1) return ctx.Error(absl::StrCat("step must be >= 1 (1-based, after increment), got ", *step));
  k::AdamWHyper hyper{*lr,
                      op.getBeta1().convertToDouble(),
                      op.getBeta2().convertToDouble(),
                      op.getEps().convertToDouble(),
                      op.getWeightDecay().convertToDouble(),
                      static_cast<int64_t>(std::llround(*step))};
  auto p = Writable(ctx, op.getParam());
  if (!p.ok()) return p.status();
  auto m = Writable(ctx, op.getExpAvg());
  if (!m.ok()) return m.status();
  auto v = Writable(ctx, op.getExpAvgSq());
  if (!v.ok()) return v.status();
  absl::Status s = DispatchFloat(ctx, "param", grad, [&](auto zero) {
    using T = decltype(zero);
    k::AdamWUpdate(p->template data<T>(), m->template data<T>(), v->template data<T>(), grad.data<T>(),
                   grad.numel(), hyper);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  if (s = ctx.SetResult(op.getNewParam(), *std::move(p)); !s.ok()) return s;
  if (s = ctx.SetResult(op.getNewExpAvg(), *std::move(m)); !s.ok()) return s;
  return ctx.SetResult(op.getNewExpAvgSq(), *std::move(v));
}

absl::Status MuonUpdate(OpContext& ctx) {
  auto op = ctx.As<gpt::MuonUpdateOp>();
  const Tensor& grad = ctx.Get(op.getGrad());
  if (absl::Status s = RequireSameShape(ctx, "grad and param", grad, ctx.Get(op.getParam())); !s.ok()) return s;
  if (absl::Status s = RequireSameShape(ctx, "grad and momentum_buffer", grad, ctx.Get(op.getMomentumBuffer()));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = RequireRank(ctx, "param", grad, 2, "a matrix [R, S]"); !s.ok()) return s;
  if (!op.getNesterov() || op.getNsSteps() != 5) {
    return ctx.Unimplemented(absl::StrCat("the CPU kernel runs Nesterov Muon with 5 Newton-Schulz steps; got nesterov=",
                                          op.getNesterov(), ", ns_steps=", op.getNsSteps()));
  }
  auto lr = ScalarOperand(ctx, "lr", ctx.Get(op.getLr()));
  if (!lr.ok()) return lr.status();
  // Under bf16 autocast Muon orthogonalises in bf16, as nanochat does (newton_schulz_bf16.h).
  const bool bf16 = ::gpt_sft::compiler::UnderBf16Autocast(op);
  if (bf16 && grad.dtype() != DType::kF32) return ctx.Error("bf16 Newton-Schulz needs f32 grad, got " + grad.ShapeString());
  const k::MuonHyper hyper{*lr, op.getMomentum().convertToDouble(), bf16};
  const int64_t rows = grad.dim(0), cols = grad.dim(1);
  auto scratch = ctx.Scratch(grad.dtype(), {k::MuonScratchSize(rows, cols)});
  if (!scratch.ok()) return scratch.status();
  auto p = Writable(ctx, op.getParam());
  if (!p.ok()) return p.status();
  auto buf = Writable(ctx, op.getMomentumBuffer());
  if (!buf.ok()) return buf.status();
  absl::Status s = DispatchFloat(ctx, "param", grad, [&](auto zero) {
    using T = decltype(zero);
    k::MuonUpdate(p->template data<T>(), buf->template data<T>(), grad.data<T>(), rows, cols, hyper,
                  scratch->template data<T>());
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  if (s = ctx.SetResult(op.getNewParam(), *std::move(p)); !s.ok()) return s;
  return ctx.SetResult(op.getNewMomentumBuffer(), *std::move(buf));
}

}  // namespace

void RegisterOptimizerOps(OpRegistry& registry) {
  registry.Register("gpt.adamw_update", AdamwUpdate);
  registry.Register("gpt.muon_update", MuonUpdate);
}

}  // namespace gpt_sft::runtime::interp
