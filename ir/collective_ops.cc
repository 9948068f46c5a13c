//===- collective_ops.cc - all_reduce, reduce_scatter, all_gather ---------===//
//
// This file implements the collectives' shape rules: all_reduce keeps the
// type; reduce_scatter divides dim `dim` by `group_size`, all_gather
// multiplies it. The verifiers require a named group.
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

/// x's type with dim `dim` divided (scatter) or multiplied (gather) by `size`.
LogicalResult InferSplitDim(std::optional<mlir::Location> loc, llvm::StringRef op, Value x_value,
                            int64_t size, int64_t dim, bool scatter,
                            llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType x = RankedOrError(loc, op, "x", x_value);
  if (!x) return failure();
  if (size < 1) {
    return ShapeError(loc, op, "group_size must be >= 1, got " + llvm::Twine(size));
  }
  if (dim < 0 || dim >= x.getRank()) {
    return ShapeError(loc, op, "dim " + llvm::Twine(dim) + " is out of range for " +
                                   TypeString(x));
  }
  llvm::SmallVector<int64_t> shape(x.getShape());
  int64_t &d = shape[dim];
  if (!ShapedType::isDynamic(d)) {
    if (scatter && d % size != 0) {
      return ShapeError(loc, op, "dim " + llvm::Twine(dim) + " of " + TypeString(x) +
                                     " does not divide by group_size " + llvm::Twine(size));
    }
    d = scatter ? d / size : d * size;
  }
  results.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult VerifyGroup(mlir::Operation *op, llvm::StringRef group) {
  if (group.empty()) return op->emitOpError("group must name a group of ranks");
  return success();
}

}  // namespace

LogicalResult AllReduceOp::inferReturnTypes(mlir::MLIRContext *,
                                            std::optional<mlir::Location> loc,
                                            Adaptor adaptor,
                                            llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType x = RankedOrError(loc, "all_reduce", "x", adaptor.getX());
  if (!x) return failure();
  results.push_back(x);
  return success();
}

LogicalResult AllReduceOp::verify() { return VerifyGroup(*this, getGroup()); }

LogicalResult ReduceScatterOp::inferReturnTypes(mlir::MLIRContext *,
                                                std::optional<mlir::Location> loc,
                                                Adaptor adaptor,
                                                llvm::SmallVectorImpl<Type> &results) {
  return InferSplitDim(loc, "reduce_scatter", adaptor.getX(),
                       static_cast<int64_t>(adaptor.getGroupSize()),
                       static_cast<int64_t>(adaptor.getDim()), /*scatter=*/true, results);
}

LogicalResult ReduceScatterOp::verify() { return VerifyGroup(*this, getGroup()); }

LogicalResult AllGatherOp::inferReturnTypes(mlir::MLIRContext *,
                                            std::optional<mlir::Location> loc,
                                            Adaptor adaptor,
                                            llvm::SmallVectorImpl<Type> &results) {
  return InferSplitDim(loc, "all_gather", adaptor.getX(),
                       static_cast<int64_t>(adaptor.getGroupSize()),
                       static_cast<int64_t>(adaptor.getDim()), /*scatter=*/false, results);
}

LogicalResult AllGatherOp::verify() { return VerifyGroup(*this, getGroup()); }

}  // namespace gpt_sft::compiler::gpt
