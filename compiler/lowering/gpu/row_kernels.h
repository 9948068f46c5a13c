//===- row_kernels.h - the row kernels' families --------------------------===//
//
// Declares the generators behind EmitRowKernels (gpu_kernels.h), ops reduced over the last
// dim, and the workgroup shape they share: x work-items per row striding over it, rows
// along y (several per workgroup when rows are short), reductions along x
// (KernelBuilder::ReduceAlongX).
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_ROW_KERNELS_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_ROW_KERNELS_H_

#include <cstdint>

#include "compiler/lowering/gpu/kernel_builder.h"
#include "compiler/lowering/planned_function.h"

namespace gpt_sft::compiler::gpu_lowering {

/// The workgroup for rows of `dim` elements, {x, rows, 1}: x work-items per row (a power of
/// two from 8 up to 256, no more than the row needs) and, for rows shorter than 128, as many
/// rows as keep the workgroup at 128 work-items (a head dim of 64: 2 rows of 64).
Dims RowsBlock(int64_t dim);

/// Where a work-item of a launch of CeilDiv(rows, block.y) workgroups of RowsBlock stands.
struct RowPlace {
  mlir::Value row;    // its row (past the last for the padding rows of the last workgroup)
  mlir::Value begin;  // row * dim: the row's first element
  mlir::Value end;    // of its strided loops over the row: dim, or 0 on a padding row, which
                      // then only takes part in the reductions (uniform control flow)
  mlir::Value valid;  // i1: row < rows
};
RowPlace PlaceInRows(KernelBuilder& k, int64_t rows, int64_t dim);

/// gpt.rms_norm, gpt.rms_norm_grad (rms_norm_kernels.cc).
mlir::LogicalResult EmitRmsNorm(lowering::OpLowering& lowering);
/// gpt.cross_entropy, gpt.cross_entropy_grad with the softcap-gradient epilogue
/// (cross_entropy_kernels.cc).
mlir::LogicalResult EmitCrossEntropy(lowering::OpLowering& lowering);

}  // namespace gpt_sft::compiler::gpu_lowering

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_ROW_KERNELS_H_
