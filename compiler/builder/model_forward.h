// EmitLoss: nanochat's GPT forward and its loss as gpt ops, at a builder's insertion point.
// Internal to compiler/builder: step_builder.cc calls it for `@loss` and `@micro_step`,
// decode_builder.cc (EmitLogitsWithCache) for `@prefill` and `@decode`.
#ifndef GPT_SFT_COMPILER_BUILDER_MODEL_FORWARD_H_
#define GPT_SFT_COMPILER_BUILDER_MODEL_FORWARD_H_

#include "compiler/builder/step_config.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace gpt_sft::compiler {

/// The values the forward reads: one per ParamLayout entry (in its order), and the batch.
/// segment_ids and positions are null unless the step is packed.
struct ForwardInputs {
  llvm::SmallVector<mlir::Value> params;
  mlir::Value inputs, targets, segment_ids, positions;
  /// Decoding only: per layer, the keys and values of the positions before `inputs`
  /// [B, Tc, Hkv, D] (after rotary and the QK norm, as nanochat caches them). Empty: no
  /// cache (training, @logits, a prefill). With a cache, `positions` must be set.
  llvm::SmallVector<mlir::Value> k_cache, v_cache;
};

/// Per layer, the keys and values of every position seen so far [B, Tc + T, Hkv, D]: the
/// input cache with this call's positions appended (just this call's without one).
struct ForwardCache {
  llvm::SmallVector<mlir::Value> keys, values;
};

/// Emits embedding -> norm -> blocks -> norm -> lm_head -> softcap (NANOCHAT.md 1.4-1.6)
/// and returns the softcapped logits [B, T, V]. `in.targets` is not read.
mlir::Value EmitLogits(mlir::OpBuilder& builder, mlir::Location loc, const StepConfig& config,
                       const ForwardInputs& in);

/// EmitLogits that also returns the KV cache in `*cache`. With `in.k_cache` set, the new
/// keys and values are appended to it (gpt.concat) and the queries attend over all of them
/// (gpt.cached_attention: the last T of Tc + T positions); without it, attention is the
/// training forward's.
mlir::Value EmitLogitsWithCache(mlir::OpBuilder& builder, mlir::Location loc, const StepConfig& config,
                                const ForwardInputs& in, ForwardCache* cache);

/// EmitLogits, then the cross entropy over every row (ignore -1): the rank-0 loss, the mean
/// over counted targets.
mlir::Value EmitLoss(mlir::OpBuilder& builder, mlir::Location loc, const StepConfig& config,
                     const ForwardInputs& in);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_BUILDER_MODEL_FORWARD_H_
