//===- row_kernels.cc - GPU kernels for rows: RMSNorm, cross-entropy ------===//
//
// This file implements EmitRowKernels, which hands each op to its family.
//
//===----------------------------------------------------------------------===//

#include "compiler/dialect/gpt_ops.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/row_kernels.h"

namespace gpt_sft::compiler::gpu_lowering {

mlir::LogicalResult EmitRowKernels(lowering::OpLowering& lowering) {
  if (llvm::isa<gpt::RmsNormOp, gpt::RmsNormGradOp>(lowering.op())) return EmitRmsNorm(lowering);
  return EmitCrossEntropy(lowering);
}

}  // namespace gpt_sft::compiler::gpu_lowering
