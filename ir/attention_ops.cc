//===- attention_ops.cc - gpt.attention and gpt.attention_grad ------------===//
//
// This file implements scaled dot-product attention with GQA/MQA and optional
// segment ids: the shape rule both ops share (q [B, T, H, D], k and v
// [B, T, Hkv, D] with H % Hkv == 0, segment_ids [B, T]), the scale check, and
// the VJP rule, which emits one gpt.attention_grad for dq, dk and dv.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"
#include "ir/shape_rules.h"

namespace gpt_sft::compiler::gpt {

using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::RankedTensorType;
using ::mlir::success;
using ::mlir::Type;
using ::mlir::Value;

namespace {

/// The checks both ops share. On success `q`, `k`, `v` hold the operand types.
LogicalResult CheckAttentionOperands(std::optional<mlir::Location> loc, llvm::StringRef op,
                                     Value q_value, Value k_value, Value v_value,
                                     Value segments_value, RankedTensorType &q,
                                     RankedTensorType &k, RankedTensorType &v) {
  q = RankedOrError(loc, op, "q", q_value);
  k = RankedOrError(loc, op, "k", k_value);
  v = RankedOrError(loc, op, "v", v_value);
  if (!q || !k || !v) return failure();
  if (q.getRank() != 4 || k.getRank() != 4) {
    return ShapeError(loc, op, "q must be [B, T, H, D] and k, v [B, T, Hkv, D], got q " +
                                   TypeString(q) + " and k " + TypeString(k));
  }
  if (failed(MergeShapes(loc, op, "k and v", k, v))) return failure();
  // B, T and D agree between q and k; heads may differ (GQA).
  for (int64_t i : {0, 1, 3}) {
    if (!DimsCompatible(q.getDimSize(i), k.getDimSize(i))) {
      return ShapeError(loc, op, "q and k differ in B, T or D: " + TypeString(q) + " and " +
                                     TypeString(k));
    }
  }
  int64_t h = q.getDimSize(2);
  int64_t hkv = k.getDimSize(2);
  if (!mlir::ShapedType::isDynamic(h) && !mlir::ShapedType::isDynamic(hkv) &&
      (hkv == 0 || h % hkv != 0)) {
    return ShapeError(loc, op, "query heads H=" + llvm::Twine(h) +
                                   " must be a multiple of kv heads Hkv=" + llvm::Twine(hkv));
  }
  if (failed(SameElementType(loc, op, q, k)) || failed(SameElementType(loc, op, q, v))) {
    return failure();
  }
  if (segments_value) {
    RankedTensorType seg = RankedOrError(loc, op, "segment_ids", segments_value);
    if (!seg) return failure();
    if (seg.getRank() != 2 || !DimsCompatible(seg.getDimSize(0), q.getDimSize(0)) ||
        !DimsCompatible(seg.getDimSize(1), q.getDimSize(1))) {
      return ShapeError(loc, op, "segment_ids must be [B, T] of q " + TypeString(q) +
                                     ", got " + TypeString(seg));
    }
  }
  return success();
}

}  // namespace

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(mlir::MLIRContext *,
                                            std::optional<mlir::Location> loc,
                                            Adaptor adaptor,
                                            llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType q, k, v;
  if (failed(CheckAttentionOperands(loc, "attention", adaptor.getQ(), adaptor.getK(),
                                    adaptor.getV(), adaptor.getSegmentIds(), q, k, v))) {
    return failure();
  }
  results.push_back(q);  // [B, T, H, D]
  return success();
}

LogicalResult AttentionOp::verify() {
  return getScale() ? VerifyPositiveAttr(*this, "scale", *getScale()) : success();
}

llvm::SmallVector<Value> AttentionOp::buildVjp(mlir::OpBuilder &builder,
                                               llvm::ArrayRef<Value> result_grads) {
  auto grad = builder.create<AttentionGradOp>(getLoc(), getQ(), getK(), getV(), getResult(),
                                              result_grads[0], getSegmentIds(),
                                              getCausalAttr(), getScaleAttr());
  llvm::SmallVector<Value> grads = {grad.getDq(), grad.getDk(), grad.getDv()};
  grads.resize(getNumOperands());  // segment ids, when present, get none
  return grads;
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionGradOp::inferReturnTypes(mlir::MLIRContext *,
                                                std::optional<mlir::Location> loc,
                                                Adaptor adaptor,
                                                llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType q, k, v;
  if (failed(CheckAttentionOperands(loc, "attention_grad", adaptor.getQ(), adaptor.getK(),
                                    adaptor.getV(), adaptor.getSegmentIds(), q, k, v))) {
    return failure();
  }
  RankedTensorType out = RankedOrError(loc, "attention_grad", "out", adaptor.getOut());
  RankedTensorType dout = RankedOrError(loc, "attention_grad", "dout", adaptor.getDout());
  if (!out || !dout) return failure();
  if (failed(MergeShapes(loc, "attention_grad", "q and out", q, out)) ||
      failed(MergeShapes(loc, "attention_grad", "q and dout", q, dout))) {
    return failure();
  }
  results.append({q, k, v});
  return success();
}

LogicalResult AttentionGradOp::verify() {
  return getScale() ? VerifyPositiveAttr(*this, "scale", *getScale()) : success();
}

}  // namespace gpt_sft::compiler::gpt
