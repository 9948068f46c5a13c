//===- row_kernels.h - the row kernels' families --------------------------===//
//
// Declares the generators behind EmitRowKernels (gpu_kernels.h): ops reduced over the last
// dim, one workgroup per row with workgroup tree reductions.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_ROW_KERNELS_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_ROW_KERNELS_H_

#include <cstdint>

#include "compiler/lowering/planned_function.h"

namespace gpt_sft::compiler::gpu_lowering {

/// Work-items per row: a power of two from 32 up to 256, no more than the row needs.
int64_t RowBlock(int64_t dim);

/// gpt.rms_norm, gpt.rms_norm_grad (rms_norm_kernels.cc).
mlir::LogicalResult EmitRmsNorm(lowering::OpLowering& lowering);
/// gpt.cross_entropy, gpt.cross_entropy_grad with the softcap-gradient epilogue
/// (cross_entropy_kernels.cc).
mlir::LogicalResult EmitCrossEntropy(lowering::OpLowering& lowering);

}  // namespace gpt_sft::compiler::gpu_lowering

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_ROW_KERNELS_H_
