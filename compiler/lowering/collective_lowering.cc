//===- collective_lowering.cc - collectives in the launch schedule --------===//
//
// This file implements LowerCollective.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/collective_lowering.h"

#include "ir/gpt_ops.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace gpt_sft::compiler::lowering {

mlir::LogicalResult LowerCollective(OpLowering& lowering) {
  mlir::Operation* op = lowering.op();
  mlir::OpBuilder& b = lowering.builder();
  mlir::Value from = lowering.operand(0), to = lowering.result(0);
  if (from != to) b.create<mlir::memref::CopyOp>(lowering.loc(), from, to);
  if (auto all_reduce = llvm::dyn_cast<gpt::AllReduceOp>(op)) {
    b.create<gpt::CollectiveOp>(lowering.loc(), b.getStringAttr("all_reduce"),
                                gpt::ReductionKindAttr::get(b.getContext(), all_reduce.getReduction()), to);
    return mlir::success();
  }
  auto size = op->getAttrOfType<mlir::IntegerAttr>("group_size");
  if (size && size.getInt() != 1) {
    return op->emitOpError("reduce_scatter and all_gather run on one rank only (the optimizer state is replicated)");
  }
  return mlir::success();
}

}  // namespace gpt_sft::compiler::lowering
