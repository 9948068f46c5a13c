//===- gpu_kernels.h - the GPU kernel generators, one per op family -------===//
//
// Declares the generators gpt-lower-to-gpu calls for each computing op of a planned entry
// point. Each emits, at the op's place in the launch schedule, the gpu.launch ops (through
// kernel_builder.h) or 1-D elementwise linalg.generic ops (tiled onto workgroups by the
// pass) that compute the op from `lowering.operand(i)` into `lowering.result(i)`, and fails
// with a diagnostic at the op for what it cannot lower. One family per file:
//
//   elementwise_kernels.cc  fusions (linalg.generic) and unfused add/mul/relu²/softcap(+grads)
//   matmul_kernels.cc       matmul, matmul_weight_grad (tiled, workgroup-memory staging)
//   attention_kernels.cc    flash-style attention forward (saves lse) and backward; under
//                           bf16 autocast on warp tile products (flash_attention_*.cc)
//   attention_cudnn.cc      the same ops as cuDNN SDPA builtins (option attention=cudnn)
//   row_kernels.cc          rms_norm(+grad), cross_entropy(+grad, + the softcap epilogue)
//   embedding_kernels.cc    embedding gather and its deterministic scatter-add gradient
//   rotary_kernels.cc       rotary and its gradient, from compile-time tables
//   layout_kernels.cc       transpose
//   optimizer_kernels.cc    adamw_update, muon_update (Newton-Schulz on the gemm)
//
// Every generator runs f32 (f64 where noted); the interpreter's kernels (runtime/kernels/cpu)
// define what each op computes, and tests/kernels checks each generator against them.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_GPU_KERNELS_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_GPU_KERNELS_H_

#include "compiler/lowering/gpu/gemm_backend.h"
#include "compiler/lowering/planned_function.h"

namespace gpt_sft::compiler::gpu_lowering {

/// The attribute on an elementwise linalg.generic of the schedule: its workgroup size; the
/// pass tiles it onto workgroups of that many work-items, one element each.
inline constexpr char kElementwiseBlockAttr[] = "gpt.block";

/// Fusions (linalg.generic from gpt-lower-fusions) and the unfused elementwise gpt ops.
mlir::LogicalResult EmitElementwise(lowering::OpLowering& lowering);
/// gpt.matmul, gpt.matmul_weight_grad.
mlir::LogicalResult EmitMatmul(lowering::OpLowering& lowering, const GpuLoweringOptions& options);
/// gpt.attention, gpt.attention_grad (under bf16 autocast on the warp tiles of options.mma).
mlir::LogicalResult EmitAttention(lowering::OpLowering& lowering, const GpuLoweringOptions& options);
/// gpt.attention, gpt.attention_grad as the builtins sdpa_fwd.cudnn / sdpa_bwd.cudnn
/// (runtime/device/SDPA_BUILTIN.md); packed rows fall back to EmitAttention with a remark.
mlir::LogicalResult EmitCudnnAttention(lowering::OpLowering& lowering, const GpuLoweringOptions& options);
/// gpt.rms_norm, gpt.rms_norm_grad, gpt.cross_entropy, gpt.cross_entropy_grad.
mlir::LogicalResult EmitRowKernels(lowering::OpLowering& lowering);
/// gpt.embedding, gpt.embedding_grad.
mlir::LogicalResult EmitEmbedding(lowering::OpLowering& lowering);
/// gpt.rotary, gpt.rotary_grad.
mlir::LogicalResult EmitRotary(lowering::OpLowering& lowering);
/// gpt.transpose.
mlir::LogicalResult EmitLayout(lowering::OpLowering& lowering);
/// gpt.adamw_update, gpt.muon_update.
mlir::LogicalResult EmitOptimizer(lowering::OpLowering& lowering, const GpuLoweringOptions& options);

}  // namespace gpt_sft::compiler::gpu_lowering

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_GPU_KERNELS_H_
