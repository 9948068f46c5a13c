//===- fusion_ops.cc - gpt.fusion, gpt.yield ------------------------------===//
//
// This file implements the fused region's verifier: the block arguments are
// the inputs and the yield's operands are the results, number for number and
// type for type, so the region can replace the ops it holds one for one.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"

namespace gpt_sft::compiler::gpt {

using ::mlir::LogicalResult;
using ::mlir::success;

YieldOp FusionOp::getYield() {
  return llvm::dyn_cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult FusionOp::verify() {
  mlir::Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size()) {
    return emitOpError("the body has ") << block.getNumArguments()
                                        << " block arguments for " << getInputs().size()
                                        << " inputs";
  }
  for (auto [i, input, arg] : llvm::enumerate(getInputs(), block.getArguments())) {
    if (input.getType() != arg.getType()) {
      return emitOpError("block argument #")
             << i << " has type " << arg.getType() << " but input #" << i << " has type "
             << input.getType();
    }
  }
  YieldOp yield = block.empty() ? YieldOp() : llvm::dyn_cast<YieldOp>(block.back());
  if (!yield) return emitOpError("the body must end in gpt.yield");
  if (yield.getValues().size() != getNumResults()) {
    return emitOpError("gpt.yield returns ") << yield.getValues().size() << " values for "
                                             << getNumResults() << " results";
  }
  for (auto [i, value, result] : llvm::enumerate(yield.getValues(), getResults())) {
    if (value.getType() != result.getType()) {
      return emitOpError("result #") << i << " has type " << result.getType()
                                     << " but gpt.yield returns " << value.getType();
    }
  }
  return success();
}

}  // namespace gpt_sft::compiler::gpt
