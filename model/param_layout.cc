#include "model/param_layout.h"

namespace gpt_sft::compiler {

int64_t ParamSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<ParamSpec> ParamLayout(const ModelConfig& config) {
  const int64_t C = config.n_embd, V = config.vocab_size;
  const int64_t kv = int64_t{config.n_kv_head} * config.head_dim();
  std::vector<ParamSpec> layout;
  layout.push_back({"transformer.wte.weight", {V, C}, ParamGroup::kEmbedding});
  for (int i = 0; i < config.n_layer; ++i) {
    const std::string h = "transformer.h." + std::to_string(i) + ".";
    layout.push_back({h + "attn.c_q.weight", {C, C}, ParamGroup::kMatrix});
    layout.push_back({h + "attn.c_k.weight", {kv, C}, ParamGroup::kMatrix});
    layout.push_back({h + "attn.c_v.weight", {kv, C}, ParamGroup::kMatrix});
    layout.push_back({h + "attn.c_proj.weight", {C, C}, ParamGroup::kMatrix});
    layout.push_back({h + "mlp.c_fc.weight", {4 * C, C}, ParamGroup::kMatrix});
    layout.push_back({h + "mlp.c_proj.weight", {C, 4 * C}, ParamGroup::kMatrix});
  }
  layout.push_back({"lm_head.weight", {V, C}, ParamGroup::kUnembedding});
  return layout;
}

}  // namespace gpt_sft::compiler
