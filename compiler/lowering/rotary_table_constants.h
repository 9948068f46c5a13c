// nanochat's rotary cos and sin tables as constants of an artifact: the compiler's decision,
// shared by every target's lowering, to rotate by tables it computed once at compile time
// rather than have each token evaluate cos and sin at run time. The entries are
// model/rotary_table.h's FillRotaryTables, the function the interpreter's kernels
// call per token, so a tabled kernel reads exactly the interpreter's values.
#ifndef GPT_SFT_COMPILER_LOWERING_ROTARY_TABLE_CONSTANTS_H_
#define GPT_SFT_COMPILER_LOWERING_ROTARY_TABLE_CONSTANTS_H_

#include <cstdint>

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

namespace gpt_sft::compiler::lowering {

/// cos and sin of positions 0 .. positions-1, [positions, head_dim / 2] f32 each (bf16 values).
struct RotaryTableConstants {
  mlir::DenseElementsAttr cos, sin;
};

RotaryTableConstants MakeRotaryTableConstants(mlir::MLIRContext* context, int64_t positions, int64_t head_dim,
                                              double base);

}  // namespace gpt_sft::compiler::lowering

#endif  // GPT_SFT_COMPILER_LOWERING_ROTARY_TABLE_CONSTANTS_H_
