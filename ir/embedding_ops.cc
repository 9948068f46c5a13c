//===- embedding_ops.cc - gpt.embedding and gpt.embedding_grad ------------===//
//
// This file implements the embedding family: the shape rules of the row gather
// `table [V, C], ids [...] -> [..., C]` and of its scatter-add gradient
// `ids [...], dy [..., C] -> [V, C]`, and the VJP rule that connects them.
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
// EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(mlir::MLIRContext *,
                                            std::optional<mlir::Location> loc,
                                            Adaptor adaptor,
                                            llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType table = RankedOrError(loc, "embedding", "table", adaptor.getTable());
  RankedTensorType ids = RankedOrError(loc, "embedding", "ids", adaptor.getIds());
  if (!table || !ids) return failure();
  if (table.getRank() != 2) {
    return ShapeError(loc, "embedding", "table must be [V, C], got " + TypeString(table));
  }
  // [...] ids -> [..., C].
  llvm::SmallVector<int64_t> shape(ids.getShape());
  shape.push_back(table.getDimSize(1));
  results.push_back(RankedTensorType::get(shape, table.getElementType()));
  return success();
}

llvm::SmallVector<Value> EmbeddingOp::buildVjp(mlir::OpBuilder &builder,
                                               llvm::ArrayRef<Value> result_grads) {
  auto table = llvm::cast<RankedTensorType>(getTable().getType());
  int64_t vocab = table.getDimSize(0);
  if (mlir::ShapedType::isDynamic(vocab)) {
    emitOpError("VJP needs a static vocabulary size, table is ") << table;
    return {};
  }
  Value dtable = builder.create<EmbeddingGradOp>(getLoc(), getIds(), result_grads[0],
                                                 static_cast<uint64_t>(vocab));
  return {dtable, Value()};
}

//===----------------------------------------------------------------------===//
// EmbeddingGradOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingGradOp::inferReturnTypes(mlir::MLIRContext *,
                                                std::optional<mlir::Location> loc,
                                                Adaptor adaptor,
                                                llvm::SmallVectorImpl<Type> &results) {
  RankedTensorType ids = RankedOrError(loc, "embedding_grad", "ids", adaptor.getIds());
  RankedTensorType dy = RankedOrError(loc, "embedding_grad", "dy", adaptor.getDy());
  if (!ids || !dy) return failure();
  // dy is [..., C] over the ids' [...].
  bool ok = dy.getRank() == ids.getRank() + 1;
  for (int64_t i = 0; ok && i < ids.getRank(); ++i) {
    ok = DimsCompatible(ids.getDimSize(i), dy.getDimSize(i));
  }
  if (!ok) {
    return ShapeError(loc, "embedding_grad", "dy must be [..., C] over ids [...], got ids " +
                                                 TypeString(ids) + " and dy " + TypeString(dy));
  }
  int64_t vocab = static_cast<int64_t>(adaptor.getVocabSize());
  results.push_back(
      RankedTensorType::get({vocab, dy.getShape().back()}, dy.getElementType()));
  return success();
}

LogicalResult EmbeddingGradOp::verify() {
  if (static_cast<int64_t>(getVocabSize()) <= 0) {
    return emitOpError("vocab_size must be positive, got ")
           << static_cast<int64_t>(getVocabSize());
  }
  return success();
}

}  // namespace gpt_sft::compiler::gpt
