// Implements ModelConfig.
#include "model/model_config.h"

#include <limits>
#include <utility>

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
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("model_config: not JSON: ", e.what()));
  }
  if (!j.is_object()) return absl::InvalidArgumentError("model_config: not a JSON object");
  ModelConfig c;
  // Unknown keys (HEAD's window_pattern, ...) are ignored; each known one must be an int.
  const std::pair<const char*, int*> fields[] = {{"sequence_len", &c.sequence_len}, {"vocab_size", &c.vocab_size},
                                                 {"n_layer", &c.n_layer},           {"n_head", &c.n_head},
                                                 {"n_kv_head", &c.n_kv_head},       {"n_embd", &c.n_embd}};
  for (const auto& [key, field] : fields) {
    auto it = j.find(key);
    if (it == j.end()) return absl::InvalidArgumentError(absl::StrCat("model_config: \"", key, "\" is missing"));
    if (!it->is_number_integer() || *it > std::numeric_limits<int>::max() || *it < std::numeric_limits<int>::min()) {
      return absl::InvalidArgumentError(absl::StrCat("model_config: \"", key, "\" = ", it->dump(), " is not an int"));
    }
    *field = it->get<int>();
  }
  if (absl::Status s = c.Validate(); !s.ok()) return s;
  return c;
}

}  // namespace gpt_sft::compiler
