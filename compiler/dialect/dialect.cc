//===- dialect.cc - the gpt dialect: registration and generated glue ------===//
//
// This file implements GptDialect::initialize (the op list of every family),
// the ReductionKind enum and VjpOpInterface's generated definitions.
//
//===----------------------------------------------------------------------===//

#include "compiler/dialect/gpt_dialect.h"
#include "compiler/dialect/gpt_ops.h"

#include "compiler/dialect/GptDialect.cpp.inc"
#include "compiler/dialect/GptEnums.cpp.inc"
#include "compiler/dialect/VjpOpInterface.cpp.inc"

namespace gpt_sft::compiler::gpt {

void GptDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/dialect/GptOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "compiler/dialect/GptGradOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "compiler/dialect/GptOptimizerOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "compiler/dialect/GptCollectiveOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "compiler/dialect/GptAutodiffOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "compiler/dialect/GptDecodeOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "compiler/dialect/GptFusionOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "compiler/dialect/GptScheduleOps.cpp.inc"
      >();
}

}  // namespace gpt_sft::compiler::gpt
