//===- shape_ops.cc - gpt.reshape and gpt.transpose -----------------------===//
//
// This file implements the data-movement family. reshape: a row-major reshape
// to `shape`, one entry of which may be -1 (inferred from the element count
// when the input is static, else dynamic). transpose: result dim i is input dim
// perm[i]. VJP rules: reshape dy back to x's shape (none for i32 x); transpose dy by the inverse
// permutation.
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
using ::mlir::Value;

namespace {

std::string DimsString(llvm::ArrayRef<int64_t> dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(dims[i]);
  }
  return text + "]";
}

}  // namespace

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

/// 1. Check the entries: sizes >= 0, at most one -1.
/// 2. Without -1: when x is static the element counts must agree.
/// 3. With -1: static x -> count / product(others) (must divide); else `?`.
LogicalResult ReshapeOp::inferReturnTypes(mlir::MLIRContext *,
                                          std::optional<mlir::Location> loc, Adaptor adaptor,
                                          llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType x = RankedOrError(loc, "reshape", "x", adaptor.getX());
  if (!x) return failure();
  llvm::ArrayRef<int64_t> target = adaptor.getShape();
  int64_t inferred = -1;  // index of the -1 entry
  int64_t known = 1;      // product of the other entries
  for (int64_t i = 0; i < static_cast<int64_t>(target.size()); ++i) {
    if (target[i] == -1 && inferred < 0) {
      inferred = i;
    } else if (target[i] < 0) {
      return ShapeError(loc, "reshape", "shape " + DimsString(target) +
                                            " may hold sizes >= 0 and one -1");
    } else {
      known *= target[i];
    }
  }
  llvm::SmallVector<int64_t> shape(target);
  if (x.hasStaticShape()) {
    int64_t count = x.getNumElements();
    bool ok = inferred < 0 ? count == known : known != 0 && count % known == 0;
    if (!ok) {
      return ShapeError(loc, "reshape", "cannot reshape " + TypeString(x) + " (" +
                                            llvm::Twine(count) + " elements) to " +
                                            DimsString(target));
    }
    if (inferred >= 0) shape[inferred] = count / known;
  } else if (inferred >= 0) {
    shape[inferred] = ShapedType::kDynamic;
  }
  results.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

llvm::SmallVector<Value> ReshapeOp::buildVjp(mlir::OpBuilder &builder,
                                             llvm::ArrayRef<Value> result_grads) {
  auto x = llvm::cast<RankedTensorType>(getX().getType());
  if (!llvm::isa<mlir::FloatType>(x.getElementType())) return {Value()};  // ids, targets
  if (x.getNumDynamicDims() > 1) {
    emitOpError("VJP cannot reshape back to more than one dynamic dim: ") << x;
    return {};
  }
  // x's shape with its (at most one) dynamic dim spelled -1.
  llvm::SmallVector<int64_t> shape;
  for (int64_t dim : x.getShape()) shape.push_back(ShapedType::isDynamic(dim) ? -1 : dim);
  Value dx = builder.create<ReshapeOp>(getLoc(), result_grads[0], shape);
  return {dx};
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(mlir::MLIRContext *,
                                            std::optional<mlir::Location> loc,
                                            Adaptor adaptor,
                                            llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType x = RankedOrError(loc, "transpose", "x", adaptor.getX());
  if (!x) return failure();
  llvm::ArrayRef<int64_t> perm = adaptor.getPerm();
  int64_t rank = x.getRank();
  llvm::SmallVector<bool> seen(rank, false);
  bool ok = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t p : perm) {
    ok = ok && p >= 0 && p < rank && !seen[p];
    if (ok) seen[p] = true;
  }
  if (!ok) {
    return ShapeError(loc, "transpose", "perm " + DimsString(perm) +
                                            " is not a permutation of the dims of " +
                                            TypeString(x));
  }
  llvm::SmallVector<int64_t> shape;
  for (int64_t p : perm) shape.push_back(x.getDimSize(p));
  results.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

llvm::SmallVector<Value> TransposeOp::buildVjp(mlir::OpBuilder &builder,
                                               llvm::ArrayRef<Value> result_grads) {
  llvm::ArrayRef<int64_t> perm = getPerm();
  llvm::SmallVector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  Value dx = builder.create<TransposeOp>(getLoc(), result_grads[0], inverse);
  return {dx};
}

}  // namespace gpt_sft::compiler::gpt
