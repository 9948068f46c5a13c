// The KV-cache family: gpt.concat (a copy of both operands, row block by row block) and
// gpt.cached_attention (queries = the last Tq of Tk positions). cached_attention runs
// runtime/kernels/cpu/cached_attention.h, except when Tq == Tk with the default scale (a
// prefill), where the flash kernel of attention.h computes the same causal attention
// faster and bit-identically to gpt.attention, so a prefill reproduces @logits exactly.
#include <cmath>
#include <cstring>

#include "ir/gpt_ops.h"
#include "runtime/interpreter/ops/ops.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/cached_attention.h"

namespace gpt_sft::runtime::interp {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace k = ::gpt_sft::runtime::kernels;

/// out = [lhs | rhs] along `axis`: for each index of the dims before the axis, the lhs
/// block then the rhs block (each contiguous in row-major order).
absl::Status Concat(OpContext& ctx) {
  auto op = ctx.As<gpt::ConcatOp>();
  const Tensor& lhs = ctx.Get(op.getLhs());
  const Tensor& rhs = ctx.Get(op.getRhs());
  const int64_t axis = op.getAxis();
  bool ok = lhs.dtype() == rhs.dtype() && lhs.rank() == rhs.rank() && axis >= 0 && axis < lhs.rank();
  for (int64_t i = 0; ok && i < lhs.rank(); ++i) ok = i == axis || lhs.dim(i) == rhs.dim(i);
  if (!ok) {
    return ctx.Error(absl::StrCat("operands must agree in type and in every dim but axis ", axis, ", got ",
                                  lhs.ShapeString(), " and ", rhs.ShapeString()));
  }
  Shape shape = lhs.shape();
  shape[axis] += rhs.dim(axis);
  auto out = ctx.AllocateResult(op.getResult(), shape);
  if (!out.ok()) return out.status();
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= lhs.dim(i);
  const size_t lhs_block = outer == 0 ? 0 : lhs.bytes() / outer, rhs_block = outer == 0 ? 0 : rhs.bytes() / outer;
  const char* a = static_cast<const char*>(lhs.raw_data());
  const char* b = static_cast<const char*>(rhs.raw_data());
  char* dst = static_cast<char*>(out->raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    if (lhs_block) std::memcpy(dst, a + o * lhs_block, lhs_block);
    dst += lhs_block;
    if (rhs_block) std::memcpy(dst, b + o * rhs_block, rhs_block);
    dst += rhs_block;
  }
  return absl::OkStatus();
}

absl::Status CachedAttention(OpContext& ctx) {
  auto op = ctx.As<gpt::CachedAttentionOp>();
  const Tensor& q = ctx.Get(op.getQ());
  const Tensor& kt = ctx.Get(op.getK());
  const Tensor& v = ctx.Get(op.getV());
  if (q.rank() != 4 || kt.rank() != 4 || kt.shape() != v.shape() || q.dtype() != kt.dtype() ||
      q.dtype() != v.dtype() || q.dim(0) != kt.dim(0) || q.dim(3) != kt.dim(3) || q.dim(1) > kt.dim(1) ||
      kt.dim(2) == 0 || q.dim(2) % kt.dim(2) != 0) {
    return ctx.Error("expected q [B, Tq, H, D] and k, v [B, Tk, Hkv, D] with Tq <= Tk and H % Hkv == 0, got q " +
                     q.ShapeString() + ", k " + kt.ShapeString() + ", v " + v.ShapeString());
  }
  const k::CachedAttentionShape s{q.dim(0), q.dim(1), kt.dim(1), q.dim(2), kt.dim(2), q.dim(3)};
  auto out = ctx.AllocateResult(op.getResult(), q.shape());
  if (!out.ok()) return out.status();
  if (s.Tq == 0) return absl::OkStatus();
  const bool prefill = s.Tq == s.Tk && !op.getScale();
  auto lse = prefill ? ctx.Scratch(q.dtype(), {s.B, s.H, s.Tq}) : absl::StatusOr<Tensor>(Tensor());
  if (!lse.ok()) return lse.status();
  const double scale = op.getScale() ? op.getScale()->convertToDouble() : 1.0 / std::sqrt(double(s.D));
  return DispatchFloat(ctx, "q", q, [&](auto zero) {
    using T = decltype(zero);
    if (prefill) {
      k::Attention(q.data<T>(), kt.data<T>(), v.data<T>(), nullptr, {s.B, s.Tq, s.H, s.Hkv, s.D},
                   out->template data<T>(), lse->template data<T>());
    } else {
      k::CachedAttention(q.data<T>(), kt.data<T>(), v.data<T>(), s, scale, out->template data<T>());
    }
    return absl::OkStatus();
  });
}

}  // namespace

void RegisterDecodeOps(OpRegistry& registry) {
  registry.Register("gpt.concat", Concat);
  registry.Register("gpt.cached_attention", CachedAttention);
}

}  // namespace gpt_sft::runtime::interp
