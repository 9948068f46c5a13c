// Implements MakeRotaryTableConstants.
#include "compiler/lowering/rotary_table_constants.h"

#include <vector>

#include "compiler/numerics/rotary_table.h"
#include "mlir/IR/BuiltinTypes.h"

namespace gpt_sft::compiler::lowering {

RotaryTableConstants MakeRotaryTableConstants(mlir::MLIRContext* context, int64_t positions, int64_t head_dim,
                                              double base) {
  const int64_t half = head_dim / 2;
  std::vector<float> cos(positions * half), sin(positions * half);
  compiler::FillRotaryTables(positions, head_dim, base, cos.data(), sin.data());
  auto type = mlir::RankedTensorType::get({positions, half}, mlir::Float32Type::get(context));
  return {mlir::DenseElementsAttr::get(type, llvm::ArrayRef<float>(cos)),
          mlir::DenseElementsAttr::get(type, llvm::ArrayRef<float>(sin))};
}

}  // namespace gpt_sft::compiler::lowering
