// gpt.attention and gpt.attention_grad through runtime/kernels/cpu/attention.h (causal,
// GQA, optional segment ids, flash-style with a saved log-sum-exp).
//
// The lse side table: the forward stores its lse [B, H, T] beside its result (released
// with it); the grad takes it from there when its `out` operand is the result of a
// gpt.attention of the same q, k, v and segments in this run, and otherwise recomputes
// the forward to get it (e.g. when `out` is a function argument).
//
// The kernel's scale is 1/sqrt(D); another `scale` is applied by scaling q by
// c = scale sqrt(D) first (and dq by c after). causal = false has no flash kernel: it runs
// the dense definition (dense_attention.h): not tiled, no blocks skipped.
//
// Under bf16 autocast (ir/autocast.h) q, k, v and dout are bf16 values: a
// causal f32 attention at the default scale runs attention.h's *Bf16Inputs kernels (bf16
// tile products, P and dS rounded as PyTorch's flash attention does), as the compiled cpu
// step's attention_bf16 builtins do. Another scale (q scaled off bf16 values) or a
// non-causal one keeps the f32 kernels.
#include <cmath>

#include "ir/autocast.h"
#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/dense_attention.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/kernels/cpu/attention.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace k = ::gpt_sft::runtime::kernels;

struct AttentionOperands {
  const Tensor* q;
  const Tensor* k;
  const Tensor* v;
  const int32_t* segment_ids;  // may be null
  k::AttentionShape shape;
  bool causal;
  double scale;     // the scores' scale
  double q_factor;  // c = scale sqrt(D); 1 for the default scale
  bool bf16 = false;  // the *Bf16Inputs kernels (bf16 autocast, f32, causal, default scale)
};

absl::StatusOr<AttentionOperands> CheckOperands(const OpContext& ctx, const Tensor& q, const Tensor& k,
                                                const Tensor& v, const Tensor& segments, bool causal,
                                                std::optional<llvm::APFloat> scale) {
  if (q.rank() != 4 || k.rank() != 4 || k.shape() != v.shape() || q.dtype() != k.dtype() ||
      q.dtype() != v.dtype() || q.dim(0) != k.dim(0) || q.dim(1) != k.dim(1) || q.dim(3) != k.dim(3) ||
      k.dim(2) == 0 || q.dim(2) % k.dim(2) != 0) {
    return ctx.Error("expected q [B, T, H, D] and k, v [B, T, Hkv, D] with H % Hkv == 0, got q " + q.ShapeString() +
                     ", k " + k.ShapeString() + ", v " + v.ShapeString());
  }
  const double default_scale = 1.0 / std::sqrt(double(q.dim(3)));
  AttentionOperands ops{&q, &k, &v, nullptr, {q.dim(0), q.dim(1), q.dim(2), k.dim(2), q.dim(3)},
                        causal, default_scale, 1.0};
  if (segments.defined()) {
    if (segments.dtype() != DType::kI32 || segments.shape() != Shape{q.dim(0), q.dim(1)}) {
      return ctx.Error("segment_ids must be [B, T] i32 of q " + q.ShapeString() + ", got " +
                       segments.ShapeString());
    }
    ops.segment_ids = segments.data<int32_t>();
  }
  if (scale) {
    ops.scale = scale->convertToDouble();
    ops.q_factor = ops.scale * std::sqrt(double(q.dim(3)));
  }
  ops.bf16 = q.dtype() == DType::kF32 && causal && ops.q_factor == 1.0 &&
             ::gpt_sft::compiler::UnderBf16Autocast(ctx.op());
  return ops;
}

/// q itself, or q * factor in a scratch tensor when the scale is not the kernel's.
absl::StatusOr<Tensor> ScaledQ(const OpContext& ctx, const Tensor& q, double factor) {
  if (factor == 1.0) return q;
  auto scaled = ctx.Scratch(q.dtype(), q.shape());
  if (!scaled.ok()) return scaled;
  absl::Status s = DispatchFloat(ctx, "q", q, [&](auto zero) {
    using T = decltype(zero);
    const T* in = q.data<T>();
    T* out = scaled->template data<T>();
    for (int64_t i = 0; i < q.numel(); ++i) out[i] = T(in[i] * factor);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return scaled;
}

/// Runs the forward kernel into `out` and a fresh lse [B, H, T].
absl::StatusOr<Tensor> RunForward(const OpContext& ctx, const AttentionOperands& a, const Tensor& out) {
  auto lse = ctx.Scratch(a.q->dtype(), {a.shape.B, a.shape.H, a.shape.T});
  if (!lse.ok()) return lse;
  if (!a.causal) {
    absl::Status s = DispatchFloat(ctx, "q", *a.q, [&](auto zero) {
      using T = decltype(zero);
      DenseAttention(a.q->data<T>(), a.k->data<T>(), a.v->data<T>(), a.segment_ids, a.shape, false, a.scale,
                     out.data<T>(), lse->template data<T>());
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    return lse;
  }
  if (a.bf16) {
    k::AttentionBf16Inputs(a.q->data<float>(), a.k->data<float>(), a.v->data<float>(), a.segment_ids, a.shape,
                           out.data<float>(), lse->template data<float>());
    return lse;
  }
  auto q = ScaledQ(ctx, *a.q, a.q_factor);
  if (!q.ok()) return q.status();
  absl::Status s = DispatchFloat(ctx, "q", *a.q, [&](auto zero) {
    using T = decltype(zero);
    k::Attention(q->template data<T>(), a.k->data<T>(), a.v->data<T>(), a.segment_ids, a.shape, out.data<T>(),
                 lse->template data<T>());
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return lse;
}

absl::Status Attention(OpContext& ctx) {
  auto op = ctx.As<gpt::AttentionOp>();
  auto a = CheckOperands(ctx, ctx.Get(op.getQ()), ctx.Get(op.getK()), ctx.Get(op.getV()),
                         ctx.Get(op.getSegmentIds()), op.getCausal(), op.getScale());
  if (!a.ok()) return a.status();
  auto out = ctx.AllocateResult(op.getResult(), a->q->shape());
  if (!out.ok()) return out.status();
  auto lse = RunForward(ctx, *a, *out);
  if (!lse.ok()) return lse.status();
  ctx.SetLse(op.getResult(), *std::move(lse));
  return absl::OkStatus();
}

/// The lse of `grad`'s forward: from the side table when `out` came from the matching
/// gpt.attention in this run, else recomputed.
absl::StatusOr<Tensor> LseForGrad(const OpContext& ctx, gpt::AttentionGradOp grad, const AttentionOperands& a) {
  auto forward = grad.getOut().getDefiningOp<gpt::AttentionOp>();
  if (forward && forward.getQ() == grad.getQ() && forward.getK() == grad.getK() && forward.getV() == grad.getV() &&
      forward.getSegmentIds() == grad.getSegmentIds() && forward.getCausal() == grad.getCausal() &&
      forward.getScaleAttr() == grad.getScaleAttr() && ctx.LseOf(grad.getOut()).defined()) {
    return ctx.LseOf(grad.getOut());
  }
  auto out = ctx.Scratch(a.q->dtype(), a.q->shape());
  if (!out.ok()) return out;
  return RunForward(ctx, a, *out);
}

absl::Status AttentionGrad(OpContext& ctx) {
  auto op = ctx.As<gpt::AttentionGradOp>();
  const Tensor& out = ctx.Get(op.getOut());
  const Tensor& dout = ctx.Get(op.getDout());
  auto a = CheckOperands(ctx, ctx.Get(op.getQ()), ctx.Get(op.getK()), ctx.Get(op.getV()),
                         ctx.Get(op.getSegmentIds()), op.getCausal(), op.getScale());
  if (!a.ok()) return a.status();
  if (absl::Status s = RequireSameShape(ctx, "q and out", *a->q, out); !s.ok()) return s;
  if (absl::Status s = RequireSameShape(ctx, "q and dout", *a->q, dout); !s.ok()) return s;
  auto lse = LseForGrad(ctx, op, *a);
  if (!lse.ok()) return lse.status();
  auto dq = ctx.AllocateResult(op.getDq(), a->q->shape());
  if (!dq.ok()) return dq.status();
  auto dk = ctx.AllocateResult(op.getDk(), a->k->shape());
  if (!dk.ok()) return dk.status();
  auto dv = ctx.AllocateResult(op.getDv(), a->v->shape());
  if (!dv.ok()) return dv.status();
  if (!a->causal) {
    return DispatchFloat(ctx, "q", *a->q, [&](auto zero) {
      using T = decltype(zero);
      DenseAttentionGrad(a->q->data<T>(), a->k->data<T>(), a->v->data<T>(), a->segment_ids, a->shape, false,
                         a->scale, out.data<T>(), lse->template data<T>(), dout.data<T>(), dq->template data<T>(),
                         dk->template data<T>(), dv->template data<T>());
      return absl::OkStatus();
    });
  }
  if (a->bf16) {
    k::AttentionGradBf16Inputs(a->q->data<float>(), a->k->data<float>(), a->v->data<float>(), a->segment_ids,
                               a->shape, out.data<float>(), lse->template data<float>(), dout.data<float>(),
                               dq->template data<float>(), dk->template data<float>(), dv->template data<float>());
    return absl::OkStatus();
  }
  auto q = ScaledQ(ctx, *a->q, a->q_factor);
  if (!q.ok()) return q.status();
  return DispatchFloat(ctx, "q", *a->q, [&](auto zero) {
    using T = decltype(zero);
    k::AttentionGrad(q->template data<T>(), a->k->data<T>(), a->v->data<T>(), a->segment_ids, a->shape,
                     out.data<T>(), lse->template data<T>(), dout.data<T>(), dq->template data<T>(),
                     dk->template data<T>(), dv->template data<T>());
    if (a->q_factor != 1.0) {
      T* d = dq->template data<T>();
      for (int64_t i = 0; i < dq->numel(); ++i) d[i] = T(d[i] * a->q_factor);
    }
    return absl::OkStatus();
  });
}

}  // namespace

void RegisterAttentionOps(OpRegistry& registry) {
  registry.Register("gpt.attention", Attention);
  registry.Register("gpt.attention_grad", AttentionGrad);
}

}  // namespace gpt_sft::runtime::interp
