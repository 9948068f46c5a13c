//===- decode_ops.cc - gpt.concat and gpt.cached_attention ----------------===//
//
// This file implements the KV-cache family: the shape rule of concat (one rank,
// one element type, dims compatible except along `axis`, which adds up) and of
// cached_attention (q [B, Tq, H, D], k and v [B, Tk, Hkv, D], Tq <= Tk, H % Hkv
// == 0), and cached_attention's scale check. Neither op has a VJP rule.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"
#include "ir/shape_rules.h"

namespace gpt_sft::compiler::gpt {

using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::RankedTensorType;
using ::mlir::ShapedType;
using ::mlir::success;
using ::mlir::Type;

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(mlir::MLIRContext *, std::optional<mlir::Location> loc,
                                         Adaptor adaptor, llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType lhs = RankedOrError(loc, "concat", "lhs", adaptor.getLhs());
  RankedTensorType rhs = RankedOrError(loc, "concat", "rhs", adaptor.getRhs());
  if (!lhs || !rhs) return failure();
  const int64_t axis = adaptor.getAxis();
  if (lhs.getRank() != rhs.getRank() || axis < 0 || axis >= lhs.getRank()) {
    return ShapeError(loc, "concat", "operands must share a rank > axis " + llvm::Twine(axis) +
                                         ", got " + TypeString(lhs) + " and " + TypeString(rhs));
  }
  if (failed(SameElementType(loc, "concat", lhs, rhs))) return failure();
  llvm::SmallVector<int64_t> shape;
  for (int64_t i = 0; i < lhs.getRank(); ++i) {
    const int64_t a = lhs.getDimSize(i), b = rhs.getDimSize(i);
    if (i == axis) {
      shape.push_back(ShapedType::isDynamic(a) || ShapedType::isDynamic(b) ? ShapedType::kDynamic : a + b);
    } else if (!DimsCompatible(a, b)) {
      return ShapeError(loc, "concat", "dims other than axis " + llvm::Twine(axis) + " differ: " +
                                           TypeString(lhs) + " and " + TypeString(rhs));
    } else {
      shape.push_back(MergeDims(a, b));
    }
  }
  results.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// CachedAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult CachedAttentionOp::inferReturnTypes(mlir::MLIRContext *,
                                                  std::optional<mlir::Location> loc,
                                                  Adaptor adaptor,
                                                  llvm::SmallVectorImpl<Type> &results) {
  constexpr llvm::StringLiteral op = "cached_attention";
  RankedTensorType q = RankedOrError(loc, op, "q", adaptor.getQ());
  RankedTensorType k = RankedOrError(loc, op, "k", adaptor.getK());
  RankedTensorType v = RankedOrError(loc, op, "v", adaptor.getV());
  if (!q || !k || !v) return failure();
  if (q.getRank() != 4 || k.getRank() != 4) {
    return ShapeError(loc, op, "q must be [B, Tq, H, D] and k, v [B, Tk, Hkv, D], got q " +
                                   TypeString(q) + " and k " + TypeString(k));
  }
  if (failed(MergeShapes(loc, op, "k and v", k, v))) return failure();
  if (!DimsCompatible(q.getDimSize(0), k.getDimSize(0)) ||
      !DimsCompatible(q.getDimSize(3), k.getDimSize(3))) {
    return ShapeError(loc, op, "q and k differ in B or D: " + TypeString(q) + " and " +
                                   TypeString(k));
  }
  const int64_t tq = q.getDimSize(1), tk = k.getDimSize(1);
  if (!ShapedType::isDynamic(tq) && !ShapedType::isDynamic(tk) && tq > tk) {
    return ShapeError(loc, op, "more queries than keys (Tq=" + llvm::Twine(tq) + " > Tk=" +
                                   llvm::Twine(tk) + "): the queries are the last Tq positions");
  }
  const int64_t h = q.getDimSize(2), hkv = k.getDimSize(2);
  if (!ShapedType::isDynamic(h) && !ShapedType::isDynamic(hkv) && (hkv == 0 || h % hkv != 0)) {
    return ShapeError(loc, op, "query heads H=" + llvm::Twine(h) +
                                   " must be a multiple of kv heads Hkv=" + llvm::Twine(hkv));
  }
  if (failed(SameElementType(loc, op, q, k)) || failed(SameElementType(loc, op, q, v))) {
    return failure();
  }
  results.push_back(q);  // [B, Tq, H, D]
  return success();
}

LogicalResult CachedAttentionOp::verify() {
  return getScale() ? VerifyPositiveAttr(*this, "scale", *getScale()) : success();
}

}  // namespace gpt_sft::compiler::gpt
