//===- optimizer_kernels.cc - GPU kernels for adamw_update, muon_update ---===//
//
// Not generated yet: every op of this family is refused with a diagnostic, so a step that
// needs it fails to compile for a GPU target, naming the op.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/gpu_kernels.h"

namespace gpt_sft::compiler::gpu_lowering {

mlir::LogicalResult EmitOptimizer(lowering::OpLowering& lowering) {
  return lowering.op()->emitOpError("gpt-lower-to-gpu: no GPU kernel generator for this op yet");
}

}  // namespace gpt_sft::compiler::gpu_lowering
