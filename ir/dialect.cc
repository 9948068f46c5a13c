//===- dialect.cc - the gpt dialect: registration and generated glue ------===//
//
// This file implements GptDialect::initialize (the op list of every family),
// the ReductionKind enum and VjpOpInterface's generated definitions.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_dialect.h"
#include "ir/gpt_ops.h"

#include "ir/GptDialect.cpp.inc"
#include "ir/GptEnums.cpp.inc"
#include "ir/VjpOpInterface.cpp.inc"

namespace gpt_sft::compiler::gpt {

void GptDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/GptOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ir/GptGradOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ir/GptOptimizerOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ir/GptCollectiveOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ir/GptAutodiffOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ir/GptDecodeOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ir/GptFusionOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ir/GptScheduleOps.cpp.inc"
      >();
}

}  // namespace gpt_sft::compiler::gpt
