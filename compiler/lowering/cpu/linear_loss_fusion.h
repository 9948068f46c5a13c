//===- linear_loss_fusion.h - the lm_head's loss as one cpu launch --------===//
//
// Declares the cpu target's largest fusion: the lm_head matmul, its softcap, the
// cross-entropy of the result, and the VJP of those down to the hidden states
// (cross_entropy_grad, softcap_grad, the transpose of the weight and the matmul dy W) become
// one builtin, linear_softcap_cross_entropy_grad_v2, emitted at the lm_head matmul's place; it
// reads the weight itself for dx = dy W, so the transpose is never made. The
// [N, V] logits and their softcapped copy are never written, and the gradient is written
// once; the weight gradient (matmul_weight_grad) stays its own launch and reads it.
//
// Under bf16 autocast (f32 only) the same chain with its two roundings, the logits' between
// the matmul and nanochat's bf16 softcap (round_bf16) and the loss gradient's before the
// softcap's gradient, is linear_softcap_bf16_cross_entropy_grad_v2, whose products are the bf16
// matmuls' (they round x, w and dy themselves).
//
// When it applies (MatchLinearLoss): the matmul's only reader is an f32/f64 softcap without
// round_bf16, or (bf16) a round_bf16 read only by a softcap with it, whose result is read
// (through reshapes) only by a cross_entropy and a cross_entropy_grad (ignore index -1, the
// same targets) and by the softcap_grad that takes the latter's gradient (bf16: through a
// round_bf16 that only it reads); that gradient is read by a matmul with the
// transpose of the same weight (read by nothing else) and by ops after it; every op between
// the lm_head matmul and that matmul is one of these or a reshape only they read. The
// lowering then checks bytes: what the launch writes (loss, dy, dx) shares no byte with what
// it reads (x, w, targets, dloss) or with each other.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_CPU_LINEAR_LOSS_FUSION_H_
#define GPT_SFT_COMPILER_LOWERING_CPU_LINEAR_LOSS_FUSION_H_

#include <optional>

#include "ir/gpt_ops.h"
#include "llvm/ADT/SmallVector.h"

namespace gpt_sft::compiler::lowering {

struct LinearLossChain {
  gpt::MatmulOp logits;  // x w^T
  gpt::SoftcapOp softcap;
  gpt::CrossEntropyOp loss;
  gpt::CrossEntropyGradOp loss_grad;
  gpt::SoftcapGradOp softcap_grad;  // its result: dy
  gpt::TransposeOp weight_t;
  gpt::MatmulOp grad_input;  // dy (w^T)^T: dx
  /// Under bf16 autocast: the logits' rounding and the loss gradient's (else null).
  gpt::RoundBf16Op logits_round, grad_round;
  /// The reshapes only the chain reads (absorbed with it).
  llvm::SmallVector<mlir::Operation*> reshapes;
  /// The targets and dloss as the function has them (through reshapes).
  mlir::Value targets, dloss;

  bool bf16() const { return static_cast<bool>(logits_round); }
  /// Every op the fused launch computes besides `logits`.
  llvm::SmallVector<mlir::Operation*> Absorbed() const;
};

/// The chain that starts at `m`, when the fusion applies (see above; bytes are the caller's).
std::optional<LinearLossChain> MatchLinearLoss(gpt::MatmulOp m);

}  // namespace gpt_sft::compiler::lowering

#endif  // GPT_SFT_COMPILER_LOWERING_CPU_LINEAR_LOSS_FUSION_H_
