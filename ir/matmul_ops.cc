//===- matmul_ops.cc - gpt.matmul and gpt.matmul_weight_grad --------------===//
//
// This file implements the matmul family: `x [..., K] @ w[N, K]^T -> [..., N]`
// and its weight cotangent `dy [..., N], x [..., K] -> dw [N, K]`.
// VJP: dx = matmul(dy, transpose(w)) (the lowering folds the transpose into the
// GEMM's flag); dw = matmul_weight_grad(dy, x), one GEMM contracting over all
// leading dims without materialising reshaped or transposed activations.
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

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(mlir::MLIRContext *,
                                         std::optional<mlir::Location> loc, Adaptor adaptor,
                                         llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType x = RankedOrError(loc, "matmul", "x", adaptor.getX());
  RankedTensorType w = RankedOrError(loc, "matmul", "w", adaptor.getW());
  if (!x || !w) return failure();
  if (x.getRank() < 1 || w.getRank() != 2) {
    return ShapeError(loc, "matmul", "expected x [..., K] and w [N, K], got " +
                                         TypeString(x) + " and " + TypeString(w));
  }
  if (!DimsCompatible(x.getShape().back(), w.getDimSize(1))) {
    return ShapeError(loc, "matmul", "contraction dims differ: x " + TypeString(x) +
                                         " has K=" + llvm::Twine(x.getShape().back()) +
                                         ", w " + TypeString(w) +
                                         " has K=" + llvm::Twine(w.getDimSize(1)));
  }
  if (failed(SameElementType(loc, "matmul", x, w))) return failure();
  llvm::SmallVector<int64_t> shape(x.getShape().drop_back());
  shape.push_back(w.getDimSize(0));
  results.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

llvm::SmallVector<Value> MatmulOp::buildVjp(mlir::OpBuilder &builder,
                                            llvm::ArrayRef<Value> result_grads) {
  Value dy = result_grads[0];  // [..., N]
  Value w_t = builder.create<TransposeOp>(getLoc(), getW(),
                                          llvm::ArrayRef<int64_t>{1, 0});  // [K, N]
  Value dx = builder.create<MatmulOp>(getLoc(), dy, w_t);            // [..., K]
  Value dw = builder.create<MatmulWeightGradOp>(getLoc(), dy, getX());  // [N, K]
  return {dx, dw};
}

//===----------------------------------------------------------------------===//
// MatmulWeightGradOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulWeightGradOp::inferReturnTypes(mlir::MLIRContext *,
                                                   std::optional<mlir::Location> loc,
                                                   Adaptor adaptor,
                                                   llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType dy = RankedOrError(loc, "matmul_weight_grad", "dy", adaptor.getDy());
  RankedTensorType x = RankedOrError(loc, "matmul_weight_grad", "x", adaptor.getX());
  if (!dy || !x) return failure();
  bool ok = dy.getRank() >= 1 && dy.getRank() == x.getRank();
  for (int64_t i = 0; ok && i + 1 < dy.getRank(); ++i) {
    ok = DimsCompatible(dy.getDimSize(i), x.getDimSize(i));
  }
  if (!ok) {
    return ShapeError(loc, "matmul_weight_grad",
                      "dy [..., N] and x [..., K] must share the leading dims, got " +
                          TypeString(dy) + " and " + TypeString(x));
  }
  if (failed(SameElementType(loc, "matmul_weight_grad", dy, x))) return failure();
  results.push_back(RankedTensorType::get({dy.getShape().back(), x.getShape().back()},
                                          dy.getElementType()));
  return success();
}

}  // namespace gpt_sft::compiler::gpt
