//===- generated_ops.cc - the ODS-generated op class definitions ----------===//
//
// This file holds only what mlir-tblgen generates from the Gpt*Ops.td files
// (accessors, builders, parsers, printers, invariant checks). The hand-written
// hooks live in the family files (elementwise_ops.cc, attention_ops.cc, ...).
// One translation unit for all of them keeps the MLIR headers parsed once.
//
//===----------------------------------------------------------------------===//

#include "compiler/dialect/gpt_ops.h"

#define GET_OP_CLASSES
#include "compiler/dialect/GptOps.cpp.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptGradOps.cpp.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptOptimizerOps.cpp.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptCollectiveOps.cpp.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptAutodiffOps.cpp.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptDecodeOps.cpp.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptFusionOps.cpp.inc"
#define GET_OP_CLASSES
#include "compiler/dialect/GptScheduleOps.cpp.inc"
