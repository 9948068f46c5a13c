//===- schedule_ops.cc - call_builtin, launch_host_kernel, collective -----===//
//
// This file implements the verifier of the launch schedule's builtin call: its operands
// are buffers (memrefs of static shape) or scalars (integers and floats), the two kinds
// a launch argument can have (artifact/).
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"

namespace gpt_sft::compiler::gpt {

mlir::LogicalResult CallBuiltinOp::verify() {
  if (getBuiltin().empty()) return emitOpError("needs a builtin name");
  for (auto [i, arg] : llvm::enumerate(getArgs())) {
    mlir::Type type = arg.getType();
    if (auto memref = llvm::dyn_cast<mlir::MemRefType>(type)) {
      if (!memref.hasStaticShape()) return emitOpError("operand ") << i << " is a memref of dynamic shape";
      continue;
    }
    if (type.isIntOrIndexOrFloat()) continue;
    return emitOpError("operand ") << i << " is neither a memref nor an integer or float scalar";
  }
  return mlir::success();
}

}  // namespace gpt_sft::compiler::gpt
