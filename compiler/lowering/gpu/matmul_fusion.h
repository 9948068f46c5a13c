//===- matmul_fusion.h - what the GPU matmuls take over from their neighbours -===//
//
// Declares the two decisions that let a gpt.matmul / gpt.matmul_weight_grad kernel do the
// work of the ops around it, made here once so the generators that must agree (the
// transpose's and the matmul's) ask the same question:
//
//   * a weight transposed for the input gradient, `dx = gpt.matmul(dy, gpt.transpose(w,
//     [1, 0]))`, is read by the gemm from `w` itself with the transpose flag off; the
//     transpose then emits nothing;
//   * the elementwise op that consumes a matmul's result (a residual gpt.add, gpt.softcap,
//     a lowered fusion, the gradient accumulation `acc + dw` into its donated argument)
//     becomes the gemm's epilogue and is absorbed (OpLowering::Absorb).
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_MATMUL_FUSION_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_MATMUL_FUSION_H_

#include "ir/gpt_ops.h"
#include "compiler/lowering/planned_function.h"

namespace gpt_sft::compiler::gpu_lowering {

/// True when `t` is a [1, 0] transpose of an entry-point argument that no op overwrites
/// (none donates it), used only as the weight of gpt.matmul ops: they read the argument
/// directly, so `t` needs no kernel.
bool FoldsIntoMatmul(gpt::TransposeOp t);

/// The elementwise op (gpt.add/mul/relu_square/softcap and their grads, or a linalg.generic
/// of identity maps from gpt-lower-fusions) that the matmul `op` may compute in its epilogue,
/// or null. Found when it consumes the result directly and either follows the matmul with
/// only placement ops between, or is the accumulation of the result into a donated argument
/// that nothing else reads; never when what it writes overlaps what the gemm reads.
mlir::Operation* AbsorbableConsumer(lowering::OpLowering& lowering);

}  // namespace gpt_sft::compiler::gpu_lowering

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_MATMUL_FUSION_H_
