//===- attention_grad_kernels.h - the attention backward's kernels --------===//
//
// Declares the backward of attention (attention_grad_kernels.cc), which
// attention_kernels.cc emits for gpt.attention_grad once it has the forward's lse (kept by
// the forward, or recomputed).
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_ATTENTION_GRAD_KERNELS_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_ATTENTION_GRAD_KERNELS_H_

#include "compiler/lowering/gpu/attention_tiles.h"

namespace gpt_sft::compiler::gpu_lowering::attention {

/// The backward's other buffers, flat: the forward's out and the cotangent dout [B,T,H,D],
/// lse [B,H,T] (read), delta [B,H,T] (scratch, written first), and the results dq
/// [B,T,H,D], dk and dv [B,T,Hkv,D] (overwritten).
struct GradBuffers {
  mlir::Value out, dout, lse, delta, dq, dk, dv;
};

/// Emits the three launches of the backward at `host`'s insertion point: delta, dk/dv, dq.
void EmitBackward(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, const Inputs& in,
                  const GradBuffers& grads);

}  // namespace gpt_sft::compiler::gpu_lowering::attention

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_ATTENTION_GRAD_KERNELS_H_
