//===- gpt_dialect.h - the gpt dialect class ------------------------------===//
//
// Declares gpt::GptDialect. Include this to register the dialect in a
// DialectRegistry; include gpt_ops.h to create or inspect ops.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_GPT_DIALECT_H_
#define GPT_SFT_IR_GPT_DIALECT_H_

#include "mlir/IR/Dialect.h"

#include "ir/GptDialect.h.inc"

#endif  // GPT_SFT_IR_GPT_DIALECT_H_
