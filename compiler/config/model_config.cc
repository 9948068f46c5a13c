// Implements ModelConfig.
#include "compiler/config/model_config.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace gpt_sft::compiler {

absl::StatusOr<ModelConfig> ModelConfig::FromDepth(int depth, int vocab_size, int sequence_len,
                                                   std::optional<int> n_embd, std::optional<int> n_head,
                                                   std::optional<int> n_kv_head) {
  if (depth <= 0) return absl::InvalidArgumentError(absl::StrCat("--depth=", depth, " must be positive"));
  ModelConfig c;
  c.n_layer = depth;
  c.vocab_size = vocab_size;
  c.sequence_len = sequence_len;
  c.n_embd = n_embd.value_or(64 * depth);
  c.n_head = n_head.value_or(std::max(1, (c.n_embd + 127) / 128));
  c.n_kv_head = n_kv_head.value_or(c.n_head);
  if (absl::Status s = c.Validate(); !s.ok()) return s;
  return c;
}

absl::Status ModelConfig::Validate() const {
  auto bad = [](const std::string& m) { return absl::InvalidArgumentError(m); };
  if (n_layer <= 0) return bad(absl::StrCat("--depth (n_layer) = ", n_layer, " must be positive"));
  if (vocab_size <= 0) return bad(absl::StrCat("--vocab_size = ", vocab_size, " must be positive"));
  if (sequence_len <= 0) return bad(absl::StrCat("--max_seq_len (sequence_len) = ", sequence_len, " must be positive"));
  if (n_embd <= 0 || n_head <= 0 || n_kv_head <= 0) {
    return bad(absl::StrCat("--width (n_embd) = ", n_embd, ", --n_head = ", n_head, ", --n_kv_head = ", n_kv_head,
                            ": all must be positive"));
  }
  if (n_embd % n_head != 0) {
    return bad(absl::StrCat("--width (n_embd) = ", n_embd, " is not divisible by --n_head = ", n_head));
  }
  if (n_kv_head > n_head || n_head % n_kv_head != 0) {
    return bad(absl::StrCat("--n_kv_head = ", n_kv_head, " must divide --n_head = ", n_head));
  }
  return absl::OkStatus();
}

int64_t ModelConfig::NumParams() const {
  const int64_t C = n_embd, V = vocab_size, kv = static_cast<int64_t>(n_kv_head) * head_dim();
  const int64_t per_layer = C * C /*c_q*/ + 2 * kv * C /*c_k, c_v*/ + C * C /*c_proj*/ + 8 * C * C /*mlp*/;
  return 2 * V * C + n_layer * per_layer;
}

int64_t ModelConfig::FlopsPerToken() const {
  const int64_t n_wte = static_cast<int64_t>(vocab_size) * n_embd;
  return 6 * (NumParams() - n_wte) + 12LL * n_layer * n_head * head_dim() * sequence_len;
}

std::string ModelConfig::ToJson() const {
  nlohmann::ordered_json j;
  j["sequence_len"] = sequence_len;
  j["vocab_size"] = vocab_size;
  j["n_layer"] = n_layer;
  j["n_head"] = n_head;
  j["n_kv_head"] = n_kv_head;
  j["n_embd"] = n_embd;
  return j.dump();
}

absl::StatusOr<ModelConfig> ModelConfig::FromJson(const std::string& json) {
  ModelConfig c;
  try {
    nlohmann::json j = nlohmann::json::parse(json);
    c.sequence_len = j.at("sequence_len").get<int>();
    c.vocab_size = j.at("vocab_size").get<int>();
    c.n_layer = j.at("n_layer").get<int>();
    c.n_head = j.at("n_head").get<int>();
    c.n_kv_head = j.at("n_kv_head").get<int>();
    c.n_embd = j.at("n_embd").get<int>();
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("model_config: ", e.what()));
  }
  if (absl::Status s = c.Validate(); !s.ok()) return s;
  return c;
}

}  // namespace gpt_sft::compiler
