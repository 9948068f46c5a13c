//===- autodiff_ops.cc - gpt.gradients ------------------------------------===//
//
// This file implements the gradient placeholder's hooks: each gradient has the
// type of its value, and the seed is a cotangent of the loss (same element type).
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"
#include "ir/shape_rules.h"

namespace gpt_sft::compiler::gpt {

using ::mlir::LogicalResult;
using ::mlir::success;
using ::mlir::Type;

LogicalResult GradientsOp::inferReturnTypes(mlir::MLIRContext *,
                                            std::optional<mlir::Location>, Adaptor adaptor,
                                            llvm::SmallVectorImpl<Type> &results) {
  for (mlir::Value value : adaptor.getWrt()) results.push_back(value.getType());
  return success();
}

LogicalResult GradientsOp::verify() {
  Type loss = llvm::cast<mlir::ShapedType>(getLoss().getType()).getElementType();
  Type seed = llvm::cast<mlir::ShapedType>(getSeed().getType()).getElementType();
  if (loss != seed) {
    return emitOpError("seed must have the loss's element type, got ")
           << getSeed().getType() << " for a loss of " << getLoss().getType();
  }
  return success();
}

}  // namespace gpt_sft::compiler::gpt
