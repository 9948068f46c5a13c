//===- gpt_ops.h - the op classes of the gpt dialect ----------------------===//
//
// Declares every gpt op class (generated from the Gpt*Ops.td files) and the
// ReductionKind enum. The ops' hooks (verifiers, shape rules, VJP rules) are
// defined in one .cc file per op family; see ADDING_AN_OP.md.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_GPT_OPS_H_
#define GPT_SFT_IR_GPT_OPS_H_

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/gpt_dialect.h"
#include "ir/vjp_op_interface.h"

#include "ir/GptEnums.h.inc"

#define GET_OP_CLASSES
#include "ir/GptOps.h.inc"
#define GET_OP_CLASSES
#include "ir/GptGradOps.h.inc"
#define GET_OP_CLASSES
#include "ir/GptOptimizerOps.h.inc"
#define GET_OP_CLASSES
#include "ir/GptCollectiveOps.h.inc"
#define GET_OP_CLASSES
#include "ir/GptAutodiffOps.h.inc"
#define GET_OP_CLASSES
#include "ir/GptDecodeOps.h.inc"
#define GET_OP_CLASSES
#include "ir/GptFusionOps.h.inc"
#define GET_OP_CLASSES
#include "ir/GptScheduleOps.h.inc"

#endif  // GPT_SFT_IR_GPT_OPS_H_
