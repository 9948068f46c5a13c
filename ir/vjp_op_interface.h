//===- vjp_op_interface.h - VjpOpInterface --------------------------------===//
//
// Declares gpt::VjpOpInterface (see VjpOpInterface.td for the contract: one
// cotangent per result in, one per operand out, null where not differentiable).
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_VJP_OP_INTERFACE_H_
#define GPT_SFT_IR_VJP_OP_INTERFACE_H_

#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Value.h"

#include "ir/VjpOpInterface.h.inc"

#endif  // GPT_SFT_IR_VJP_OP_INTERFACE_H_
