//===- softcap_epilogue.h - fusing the softcap's gradient into the loss's -===//
//
// Declares the compiler's epilogue decision that every target shares: when the gradient of
// gpt.cross_entropy_grad is read only (through views) by gpt.softcap_grad of the very logits
// the cross-entropy differentiated, one pass can write the softcap's gradient directly into
// the softcap_grad's buffer, and the softcap_grad is absorbed. It is not fused when the logits
// share bytes with that buffer (a target whose kernel reads each element before it writes it
// may allow the exact same bytes); small inputs the plan gave overlapping bytes (targets,
// dloss) are copied aside first. A target with a kernel for it may also take the bf16 step's
// shape, a gpt.round_bf16 of the gradient between the two (absorbed as well).
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_SOFTCAP_EPILOGUE_H_
#define GPT_SFT_COMPILER_LOWERING_SOFTCAP_EPILOGUE_H_

#include <optional>

#include "ir/gpt_ops.h"
#include "compiler/lowering/planned_function.h"

namespace gpt_sft::compiler::lowering {

struct SoftcapEpilogue {
  double cap = 0;
  mlir::Value out;      // the softcap_grad's buffer: where the fused gradient goes
  mlir::Value targets;  // the cross-entropy's targets, or a copy of them
  mlir::Value dloss;    // its upstream gradient, or a copy
  bool round_dy = false;  // a gpt.round_bf16 between the two was absorbed: round before the factor
};

/// The fusion for `ce`, when it applies: the softcap_grad is then absorbed and the copies
/// emitted. `allow_same_bytes`: the logits may be exactly the output's bytes.
/// `through_round_bf16`: one gpt.round_bf16 of the gradient may stand between (round_dy).
std::optional<SoftcapEpilogue> FuseSoftcapEpilogue(OpLowering& lowering, gpt::CrossEntropyGradOp ce,
                                                   bool allow_same_bytes, bool through_round_bf16 = false);

}  // namespace gpt_sft::compiler::lowering

#endif  // GPT_SFT_COMPILER_LOWERING_SOFTCAP_EPILOGUE_H_
