// BuildDecodeModule: nanochat's forward with a KV cache (NANOCHAT.md 1.7) as gpt IR, for
// sampling on the interpreter. Two entry points, T and the cache length Tc dynamic:
//
//   @prefill(params..., inputs [B, T] i32)
//       -> (logits [B, T, V], k_cache/0, v_cache/0, ..., k_cache/L-1, v_cache/L-1)
//   @decode(params..., inputs [B, T] i32, positions [B, T] i32, k_cache/0, v_cache/0, ...)
//       -> (logits [B, T, V], k_cache/0, v_cache/0, ...)
//
// Caches are [B, Tc, Hkv, D] per layer, keys after rotary and the QK norm. @prefill is the
// training forward (its logits are @logits') that also returns every layer's k and v;
// @decode appends its positions' k and v to the caches it is given (gpt.concat) and
// returns the grown caches [B, Tc + T, Hkv, D]; its queries attend over all of them
// (gpt.cached_attention). `positions` are absolute, Tc .. Tc + T - 1 for a cache of Tc
// positions, so rotary rotates each new token by its place in the whole sequence. T = 1
// is one decoding step; T > 1 continues a prompt (a chunked prefill). Every argument and
// result carries its name in `gpt.name` (the parameters by their state_dict names).
#ifndef GPT_SFT_COMPILER_BUILDER_DECODE_BUILDER_H_
#define GPT_SFT_COMPILER_BUILDER_DECODE_BUILDER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/builder/step_config.h"
#include "model/model_config.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
class MLIRContext;
class ModuleOp;
}  // namespace mlir

namespace gpt_sft::compiler {

struct DecodeConfig {
  ModelConfig model;
  int64_t batch_size = 1;  // B: static; sampling uses 1
  ElementType dtype = ElementType::kF32;
};

inline constexpr char kPrefillFunction[] = "prefill";
inline constexpr char kDecodeFunction[] = "decode";

/// "k_cache/<layer>" and "v_cache/<layer>".
std::string KCacheName(int layer);
std::string VCacheName(int layer);
EntrySignature PrefillSignature(const DecodeConfig& config);
EntrySignature DecodeSignature(const DecodeConfig& config);

/// Both entry points for `config` (validated first; errors name the field). The module
/// verifies and carries the model in a `gpt.model_config` attribute, like the step's.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> BuildDecodeModule(mlir::MLIRContext& context,
                                                                   const DecodeConfig& config);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_BUILDER_DECODE_BUILDER_H_
