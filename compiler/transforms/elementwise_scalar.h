//===- elementwise_scalar.h - one elementwise gpt op as scalar code -------===//
//
// Declares EmitElementwiseScalar, the single definition of what gpt.add, gpt.mul,
// gpt.relu_square, gpt.relu_square_grad, gpt.softcap, gpt.softcap_grad and gpt.round_bf16
// compute on one element, for every lowering that writes them as scalar code.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_TRANSFORMS_ELEMENTWISE_SCALAR_H_
#define GPT_SFT_COMPILER_TRANSFORMS_ELEMENTWISE_SCALAR_H_

#include "llvm/ADT/ArrayRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"

namespace gpt_sft::compiler {

/// The scalar code of `op` (one of the ops above) on the scalars `in` of its operands, in
/// operand order; failure for any other op.
mlir::FailureOr<mlir::Value> EmitElementwiseScalar(mlir::OpBuilder& b, mlir::Location loc, mlir::Operation* op,
                                                   llvm::ArrayRef<mlir::Value> in);

/// gpt.round_bf16 on one f32 scalar `x`: the nearest bfloat16 value (ties to even, NaN kept),
/// as f32, in integer arith code every target takes (also the GPU rotary kernel's roundings).
mlir::Value EmitRoundToBf16(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_TRANSFORMS_ELEMENTWISE_SCALAR_H_
