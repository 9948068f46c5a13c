//===- elementwise_tiling.h - elementwise generics onto workgroups --------===//
//
// Declares TileElementwiseOntoWorkgroups: every 1-D elementwise linalg.generic that the
// kernel generators left in a launch schedule (tagged with its workgroup size,
// gpu_kernels.h kElementwiseBlockAttr) is tiled with the transform dialect - one
// scf.forall over workgroups, one over work-items, mapped to a gpu.launch - and its body
// becomes scalar loads, arithmetic and stores. The launch keeps the generic's kernel name.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_ELEMENTWISE_TILING_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_ELEMENTWISE_TILING_H_

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir {
class DialectRegistry;
}  // namespace mlir

namespace gpt_sft::compiler::gpu_lowering {

/// The dialects and transform-dialect extensions the tiling needs loaded.
void RegisterElementwiseTilingDialects(mlir::DialectRegistry& registry);

/// Tiles every tagged generic of `module` into a gpu.launch; fails with the transform
/// interpreter's diagnostics.
mlir::LogicalResult TileElementwiseOntoWorkgroups(mlir::ModuleOp module);

}  // namespace gpt_sft::compiler::gpu_lowering

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_ELEMENTWISE_TILING_H_
