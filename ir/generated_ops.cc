//===- generated_ops.cc - the ODS-generated op class definitions ----------===//
//
// This file holds only what mlir-tblgen generates from the Gpt*Ops.td files
// (accessors, builders, parsers, printers, invariant checks). The hand-written
// hooks live in the family files (elementwise_ops.cc, attention_ops.cc, ...).
// One translation unit for all of them keeps the MLIR headers parsed once.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"

#define GET_OP_CLASSES
#include "ir/GptOps.cpp.inc"
#define GET_OP_CLASSES
#include "ir/GptGradOps.cpp.inc"
#define GET_OP_CLASSES
#include "ir/GptOptimizerOps.cpp.inc"
#define GET_OP_CLASSES
#include "ir/GptCollectiveOps.cpp.inc"
#define GET_OP_CLASSES
#include "ir/GptAutodiffOps.cpp.inc"
#define GET_OP_CLASSES
#include "ir/GptDecodeOps.cpp.inc"
#define GET_OP_CLASSES
#include "ir/GptFusionOps.cpp.inc"
#define GET_OP_CLASSES
#include "ir/GptScheduleOps.cpp.inc"
