// The lm_head's loss and its gradient down to the hidden states, in one pass over blocks of
// rows: the compiled step's fusion of gpt.matmul (x W^T) -> gpt.softcap -> gpt.cross_entropy
// with the VJP gpt.cross_entropy_grad -> gpt.softcap_grad -> gpt.matmul (dy W).
//
// Unfused, the [N, V] logits are written by the matmul, read and rewritten by the softcap
// (with the loss in the same pass), read again by the gradient: three trips through memory of
// the step's largest tensor (268 MB at the benchmark config). Here each block of rows is
// multiplied into a per-thread scratch block, softcapped, its loss terms and gradient rows
// computed while the block is hot, from one pass of exps per row (the unfused loss and its
// gradient each make one), and dx = dy W for those rows follows at once; only the gradient dy
// is written in full (the weight gradient, a separate launch, reads it).
//
// A block whose targets are all ignored (a short conversation's padding) is not multiplied at
// all: its loss terms are none and its rows of dy and dx zero, what the unfused chain writes
// for them from finite logits.
//
// Bit for bit the unfused kernels: the blocks are Gemm's own BLAS calls (GemmBlockRows), each
// row runs cross_entropy_rows.h's arithmetic, and the loss keeps its 16-row partial sums.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_LINEAR_CROSS_ENTROPY_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_LINEAR_CROSS_ENTROPY_H_

#include <cstdint>

#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::kernels {

/// x [N, C] hidden states, w [V, C] the lm_head, targets [N] (-1: ignored).
struct LinearLossShape {
  int64_t N, V, C;
};

/// loss = mean CE(cap tanh(x w^T / cap), targets) (returned); dy [N, V] = its gradient times
/// `dloss` with respect to the pre-softcap logits; dx [N, C] = dy w, bit for bit the unfused
/// matmul by w's transposed copy. dy and dx must not share
/// bytes with the inputs or with each other. `workspace`: LinearSoftcapCrossEntropyWorkspaceBytes.
template <typename T>
CrossEntropyResult LinearSoftcapCrossEntropyWithGrad(const T* x, const T* w, const int32_t* targets,
                                                     LinearLossShape s, T cap, double dloss, T* dy, T* dx,
                                                     Workspace workspace);
template <typename T>
int64_t LinearSoftcapCrossEntropyWorkspaceBytes(LinearLossShape s);

/// How the bf16 chain writes dy: f32; prepared for the bf16 GEMMs (matmul_bf16.h), row-major;
/// or prepared in the weight gradient's slabs (Bf16DySlabs::Of(N, V, C)), which it reads
/// without copying them.
enum class LinearLossDy { kF32, kPreparedRows, kPreparedSlabs };

/// The same chain under bf16 autocast (the compiled step's fusion of matmul_bf16 -> round_bf16
/// -> nanochat's bf16 softcap -> cross_entropy and the VJP cross_entropy_grad -> round_bf16 ->
/// softcap_grad -> matmul_bf16 (dy w)): the products on x, w and dy rounded to bf16 by
/// `kernel` (matmul_bf16.h), the logits rounded to bf16 before the softcap's table
/// (softcap_bf16.h), the loss's cotangent rounded before the softcap's factor. dy is the
/// gradient the weight gradient (a separate launch) then reads: f32, or prepared for `kernel`
/// (matmul_bf16.h: what a bf16 GEMM reads of it, half the bytes on onednn;
/// MatmulGradWeightBf16PreparedDy, or in slabs MatmulGradWeightBf16PreparedDySlabs, reads it),
/// which also spares dx's product its own pass over dy. dx unrounded, as the unfused matmul writes it. `workspace`:
/// LinearSoftcapBf16CrossEntropyWorkspaceBytes.
CrossEntropyResult LinearSoftcapBf16CrossEntropyWithGrad(Bf16Gemm kernel, const float* x, const float* w,
                                                         const int32_t* targets, LinearLossShape s,
                                                         float cap, double dloss, void* dy, LinearLossDy dy_layout,
                                                         float* dx, Workspace workspace);
int64_t LinearSoftcapBf16CrossEntropyWorkspaceBytes(Bf16Gemm kernel, LinearLossShape s);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_LINEAR_CROSS_ENTROPY_H_
