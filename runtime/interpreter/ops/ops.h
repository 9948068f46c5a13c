// The op families' registration functions (one per ops/*_ops.cc file, each beside the
// dialect's family of the same name) and the helpers their implementations share.
#ifndef GPT_SFT_RUNTIME_INTERPRETER_OPS_OPS_H_
#define GPT_SFT_RUNTIME_INTERPRETER_OPS_OPS_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/base/tensor.h"
#include "runtime/interpreter/op_context.h"
#include "runtime/interpreter/op_registry.h"

namespace gpt_sft::runtime::interp {

void RegisterAttentionOps(OpRegistry& registry);
void RegisterCollectiveOps(OpRegistry& registry);
void RegisterConstantOps(OpRegistry& registry);
void RegisterDecodeOps(OpRegistry& registry);
void RegisterElementwiseOps(OpRegistry& registry);
void RegisterEmbeddingOps(OpRegistry& registry);
void RegisterFusionOps(OpRegistry& registry);
void RegisterFusionOps(OpRegistry& registry);
void RegisterFusionOps(OpRegistry& registry);
void RegisterLossOps(OpRegistry& registry);
void RegisterMatmulOps(OpRegistry& registry);
void RegisterNormOps(OpRegistry& registry);
void RegisterOptimizerOps(OpRegistry& registry);
void RegisterRotaryOps(OpRegistry& registry);
void RegisterShapeOps(OpRegistry& registry);

/// Calls body(T{}) with T = float or double for `t`'s element type; an error naming the
/// op and `what` for an integer tensor.
template <typename Body>
absl::Status DispatchFloat(const OpContext& ctx, const std::string& what, const Tensor& t, Body&& body) {
  switch (t.dtype()) {
    case DType::kF32: return body(float{});
    case DType::kF64: return body(double{});
    default: return ctx.Error(absl::StrCat(what, " must be f32 or f64, got ", t.ShapeString()));
  }
}

/// An error unless `a` and `b` have one shape and element type.
inline absl::Status RequireSameShape(const OpContext& ctx, const std::string& what, const Tensor& a,
                                     const Tensor& b) {
  if (a.shape() == b.shape() && a.dtype() == b.dtype()) return absl::OkStatus();
  return ctx.Error(absl::StrCat(what, " must have one shape and type, got ", a.ShapeString(), " and ",
                                b.ShapeString()));
}

/// An error unless `t` has rank `rank`; `layout` names the dims ("[B, T, H, D]").
inline absl::Status RequireRank(const OpContext& ctx, const std::string& what, const Tensor& t, int64_t rank,
                                const std::string& layout) {
  if (t.rank() == rank) return absl::OkStatus();
  return ctx.Error(absl::StrCat(what, " must be ", layout, ", got ", t.ShapeString()));
}

/// Product of all dims but the last ("rows" of a [..., C] tensor).
inline int64_t LeadingElements(const Tensor& t) {
  int64_t n = 1;
  for (int64_t i = 0; i + 1 < t.rank(); ++i) n *= t.dim(i);
  return n;
}

}  // namespace gpt_sft::runtime::interp

#endif  // GPT_SFT_RUNTIME_INTERPRETER_OPS_OPS_H_
