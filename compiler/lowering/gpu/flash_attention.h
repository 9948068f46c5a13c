//===- flash_attention.h - attention on warp tile products ----------------===//
//
// Declares the FlashAttention-2 kernels that attention_kernels.cc emits for gpt.attention
// and gpt.attention_grad under bf16 autocast (their q, k, v, dout are bf16 values), where
// FlashSupports(shape): every product a loop of m16n8k16 bf16 warp tiles (mma_tile.h) with
// f32 accumulators in registers. The numerics are the interpreter's bf16 attention
// (runtime/kernels/cpu/attention.h, *Bf16Inputs): scores scaled then shifted by the running
// max of 64-key blocks, P rounded to bf16 before P V and P^T dO, dS = P (dP - Delta) rounded
// to bf16 unscaled and its products scaled after, Delta = dO . bf16(O).
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_FLASH_ATTENTION_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_FLASH_ATTENTION_H_

#include "compiler/lowering/gpu/attention_grad_kernels.h"
#include "compiler/lowering/gpu/attention_tiles.h"
#include "compiler/lowering/gpu/gemm_backend.h"

namespace gpt_sft::compiler::gpu_lowering::attention {

/// The forward (flash_attention_forward.cc): out [B*T*H*D] and lse [B*H*T] from `in`.
void EmitFlashForward(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, const Inputs& in, mlir::Value out,
                      mlir::Value lse, MmaRealization how);

/// The backward (flash_attention_grad.cc): delta, dk/dv, dq.
void EmitFlashBackward(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, const Inputs& in,
                       const GradBuffers& grads, MmaRealization how);

}  // namespace gpt_sft::compiler::gpu_lowering::attention

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_FLASH_ATTENTION_H_
