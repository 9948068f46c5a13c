// ModelConfig: the shape of a nanochat-style GPT (nanochat's GPTConfig), derived from a
// depth by nanochat's rules. MLIR-free: the builder (compiler/) and the runtime both use it.
#ifndef GPT_SFT_MODEL_MODEL_CONFIG_H_
#define GPT_SFT_MODEL_MODEL_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace gpt_sft::compiler {

/// Fields in GPTConfig's order; checkpoints carry them as the meta's "model_config".
struct ModelConfig {
  int sequence_len = 2048;
  int vocab_size = 65536;
  int n_layer = 20;
  int n_head = 10;
  int n_kv_head = 10;
  int n_embd = 1280;

  /// nanochat's base_train rules: n_embd = 64 * depth, n_head = max(1, ceil(n_embd / 128)),
  /// n_kv_head = n_head. `n_embd` and `n_head` override the derived values (the CPU
  /// benchmark config: depth 4, width 256, 2 heads). Errors name the flag at fault.
  static absl::StatusOr<ModelConfig> FromDepth(int depth, int vocab_size, int sequence_len = 2048,
                                               std::optional<int> n_embd = std::nullopt,
                                               std::optional<int> n_head = std::nullopt,
                                               std::optional<int> n_kv_head = std::nullopt);

  /// C % H == 0, Hkv <= H, H % Hkv == 0, everything positive.
  absl::Status Validate() const;

  int head_dim() const { return n_embd / n_head; }
  /// wte + lm_head + 12 C^2 per layer (for Hkv == H), exactly as the state_dict counts.
  int64_t NumParams() const;
  /// nanochat's estimate_flops: 6 (N - N_wte) + 12 L H D T.
  int64_t FlopsPerToken() const;

  /// {"sequence_len": ..., "vocab_size": ..., ...} in GPTConfig's order, and back.
  std::string ToJson() const;
  static absl::StatusOr<ModelConfig> FromJson(const std::string& json);

  bool operator==(const ModelConfig& o) const {
    return sequence_len == o.sequence_len && vocab_size == o.vocab_size && n_layer == o.n_layer &&
           n_head == o.n_head && n_kv_head == o.n_kv_head && n_embd == o.n_embd;
  }
};

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_MODEL_MODEL_CONFIG_H_
