// The parameter layout of a nanochat GPT: every tensor's state_dict name, shape and optimizer
// group, in state_dict order. The builder (compiler/) emits one function argument per entry
// and ParamStore (runtime/) allocates one buffer per entry, so both agree by construction.
#ifndef GPT_SFT_MODEL_PARAM_LAYOUT_H_
#define GPT_SFT_MODEL_PARAM_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace gpt_sft::compiler {

/// Which optimizer and learning rate a parameter gets (NANOCHAT.md 4.1): AdamW at
/// embedding_lr, AdamW at unembedding_lr, or Muon at matrix_lr.
enum class ParamGroup { kEmbedding, kUnembedding, kMatrix };

struct ParamSpec {
  std::string name;            // e.g. "transformer.h.3.attn.c_q.weight"
  std::vector<int64_t> shape;  // (out_features, in_features) for Linear weights
  ParamGroup group;
  int64_t numel() const;
};

/// wte, then per layer c_q, c_k, c_v, c_proj, c_fc, mlp c_proj, then lm_head (2 + 6L).
/// `config` must be valid (ModelConfig::Validate).
std::vector<ParamSpec> ParamLayout(const ModelConfig& config);

/// True for the AdamW groups (embedding, unembedding); false for Muon.
inline bool UsesAdamW(ParamGroup group) { return group != ParamGroup::kMatrix; }

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_MODEL_PARAM_LAYOUT_H_
