//===- gpt_ops.h - the op classes of the gpt dialect ----------------------===//
//
// Declares every gpt op class (generated from the Gpt*Ops.td files) and the
// ReductionKind enum. The ops' hooks (verifiers, shape rules, VJP rules) are
// defined in one .cc file per op family; see ADDING_AN_OP.md.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_DIALECT_GPT_OPS_H_
#define GPT_SFT_COMPILER_DIALECT_GPT_OPS_H_

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/dialect/gpt_dialect.h"
#include "compiler/dialect/vjp_op_interface.h"

#include "compiler/dialect/GptEnums.h.inc"

#define GET_OP_CLASSES
#include "compiler/dialect/GptOps.h.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptGradOps.h.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptOptimizerOps.h.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptCollectiveOps.h.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptAutodiffOps.h.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptDecodeOps.h.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptFusionOps.h.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptScheduleOps.h.inc"

#endif  // GPT_SFT_COMPILER_DIALECT_GPT_OPS_H_
