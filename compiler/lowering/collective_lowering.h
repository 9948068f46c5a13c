//===- collective_lowering.h - collectives in the launch schedule ---------===//
//
// Declares LowerCollective, the same on every target: gpt.all_reduce becomes the operand
// copied into the result's buffer unless it is there, then gpt.collective "all_reduce" on that
// buffer (the runtime runs it over its communicator; nothing on one rank); reduce_scatter and
// all_gather over one rank are the copy alone (the step builder emits no sharded ones yet).
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_COLLECTIVE_LOWERING_H_
#define GPT_SFT_COMPILER_LOWERING_COLLECTIVE_LOWERING_H_

#include "compiler/lowering/planned_function.h"

namespace gpt_sft::compiler::lowering {

mlir::LogicalResult LowerCollective(OpLowering& lowering);

}  // namespace gpt_sft::compiler::lowering

#endif  // GPT_SFT_COMPILER_LOWERING_COLLECTIVE_LOWERING_H_
