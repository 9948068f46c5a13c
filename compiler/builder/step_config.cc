#include "compiler/builder/step_config.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace gpt_sft::compiler {

double OptimizerConfig::InitialLr(ParamGroup group, int n_embd) const {
  const double adamw_scale = std::pow(n_embd / 768.0, -0.5);
  switch (group) {
    case ParamGroup::kEmbedding:
      return embedding_lr * adamw_scale * init_lr_frac;
    case ParamGroup::kUnembedding:
      return unembedding_lr * adamw_scale * init_lr_frac;
    case ParamGroup::kMatrix:
      return matrix_lr * init_lr_frac;
  }
  return 0.0;
}

absl::Status StepConfig::Validate() const {
  if (absl::Status s = model.Validate(); !s.ok()) return s;
  if (batch_size <= 0) return absl::InvalidArgumentError(absl::StrCat("batch_size must be positive, got ", batch_size));
  if (seq_len != kDynamicDim && seq_len <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("seq_len must be positive or dynamic, got ", seq_len));
  }
  if (seq_len > model.sequence_len * 10) {
    return absl::InvalidArgumentError(absl::StrCat("seq_len ", seq_len, " exceeds the rotary cache of 10 x sequence_len ",
                                                   model.sequence_len));
  }
  if (grad_accum_steps < 1) {
    return absl::InvalidArgumentError(absl::StrCat("grad_accum_steps must be >= 1, got ", grad_accum_steps));
  }
  if (dp_world_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("dp_world_size must be >= 1, got ", dp_world_size));
  }
  if (optimizer.muon_ns_steps < 1) {
    return absl::InvalidArgumentError(absl::StrCat("muon_ns_steps must be >= 1, got ", optimizer.muon_ns_steps));
  }
  return absl::OkStatus();
}

const char* DtypeName(ElementType dtype) {
  switch (dtype) {
    case ElementType::kF32: return "f32";
    case ElementType::kF64: return "f64";
    case ElementType::kBF16: return "bf16";
  }
  return "?";
}

absl::StatusOr<ElementType> ParseDtype(const std::string& name) {
  if (name == "f32" || name == "float32") return ElementType::kF32;
  if (name == "f64" || name == "float64") return ElementType::kF64;
  if (name == "bf16" || name == "bfloat16") return ElementType::kBF16;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name, "'; expected one of: float32 (f32), float64 (f64), bfloat16 (bf16)"));
}

std::string GradName(const std::string& param) { return "grad/" + param; }

std::vector<std::string> OptimizerStateNames(const ParamSpec& param) {
  if (UsesAdamW(param.group)) return {"adamw.exp_avg/" + param.name, "adamw.exp_avg_sq/" + param.name};
  return {"muon.momentum_buffer/" + param.name};
}

std::vector<std::string> BatchNames(bool packed) {
  if (packed) return {"inputs", "targets", "segment_ids", "positions"};
  return {"inputs", "targets"};
}

namespace {

std::vector<std::string> ParamNames(const StepConfig& config) {
  std::vector<std::string> names;
  for (const ParamSpec& p : ParamLayout(config.model)) names.push_back(p.name);
  return names;
}

std::vector<std::string> GradNames(const StepConfig& config) {
  std::vector<std::string> names;
  for (const ParamSpec& p : ParamLayout(config.model)) names.push_back(GradName(p.name));
  return names;
}

std::vector<std::string> StateNames(const StepConfig& config) {
  std::vector<std::string> names;
  for (const ParamSpec& p : ParamLayout(config.model)) {
    for (std::string& s : OptimizerStateNames(p)) names.push_back(std::move(s));
  }
  return names;
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

EntrySignature LogitsSignature(const StepConfig& config) {
  EntrySignature s;
  Append(s.arguments, ParamNames(config));
  for (const std::string& name : BatchNames(config.packed)) {
    if (name != "targets") s.arguments.push_back(name);
  }
  s.results = {"logits"};
  return s;
}

EntrySignature LossSignature(const StepConfig& config) {
  EntrySignature s;
  Append(s.arguments, ParamNames(config));
  Append(s.arguments, BatchNames(config.packed));
  s.results = {"loss"};
  return s;
}

EntrySignature MicroStepSignature(const StepConfig& config) {
  EntrySignature s;
  Append(s.arguments, ParamNames(config));
  Append(s.arguments, GradNames(config));
  Append(s.arguments, BatchNames(config.packed));
  s.results = {"loss"};
  Append(s.results, GradNames(config));
  return s;
}

EntrySignature OptimizerStepSignature(const StepConfig& config) {
  EntrySignature s;
  Append(s.arguments, ParamNames(config));
  Append(s.arguments, GradNames(config));
  Append(s.arguments, StateNames(config));
  s.arguments.push_back("lr_multiplier");
  s.arguments.push_back("step");
  Append(s.results, ParamNames(config));
  Append(s.results, StateNames(config));
  return s;
}

std::string StepConfig::ToJson() const {
  nlohmann::ordered_json j;
  j["model"] = nlohmann::json::parse(model.ToJson());
  j["batch_size"] = batch_size;
  j["seq_len"] = seq_len;
  j["packed"] = packed;
  j["grad_accum_steps"] = grad_accum_steps;
  j["dp_world_size"] = dp_world_size;
  j["dtype"] = DtypeName(dtype);
  const OptimizerConfig& o = optimizer;
  j["optimizer"] = {{"unembedding_lr", o.unembedding_lr}, {"embedding_lr", o.embedding_lr},
                    {"matrix_lr", o.matrix_lr},           {"init_lr_frac", o.init_lr_frac},
                    {"weight_decay", o.weight_decay},     {"adam_beta1", o.adam_beta1},
                    {"adam_beta2", o.adam_beta2},         {"adam_eps", o.adam_eps},
                    {"muon_momentum", o.muon_momentum},   {"muon_nesterov", o.muon_nesterov},
                    {"muon_ns_steps", o.muon_ns_steps}};
  return j.dump();
}

absl::StatusOr<StepConfig> StepConfig::FromJson(const std::string& json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("step_config: not a JSON object");
  StepConfig c;
  try {
    absl::StatusOr<ModelConfig> model = ModelConfig::FromJson(j.at("model").dump());
    if (!model.ok()) return model.status();
    c.model = *model;
    c.batch_size = j.at("batch_size").get<int64_t>();
    c.seq_len = j.at("seq_len").get<int64_t>();
    c.packed = j.at("packed").get<bool>();
    c.grad_accum_steps = j.at("grad_accum_steps").get<int>();
    c.dp_world_size = j.at("dp_world_size").get<int>();
    absl::StatusOr<ElementType> dtype = ParseDtype(j.at("dtype").get<std::string>());
    if (!dtype.ok()) return absl::InvalidArgumentError(absl::StrCat("step_config: ", dtype.status().message()));
    c.dtype = *dtype;
    const nlohmann::json& o = j.at("optimizer");
    OptimizerConfig& p = c.optimizer;
    p.unembedding_lr = o.at("unembedding_lr").get<double>();
    p.embedding_lr = o.at("embedding_lr").get<double>();
    p.matrix_lr = o.at("matrix_lr").get<double>();
    p.init_lr_frac = o.at("init_lr_frac").get<double>();
    p.weight_decay = o.at("weight_decay").get<double>();
    p.adam_beta1 = o.at("adam_beta1").get<double>();
    p.adam_beta2 = o.at("adam_beta2").get<double>();
    p.adam_eps = o.at("adam_eps").get<double>();
    p.muon_momentum = o.at("muon_momentum").get<double>();
    p.muon_nesterov = o.at("muon_nesterov").get<bool>();
    p.muon_ns_steps = o.at("muon_ns_steps").get<int>();
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("step_config: ", e.what()));
  }
  if (absl::Status s = c.Validate(); !s.ok()) return s;
  return c;
}

}  // namespace gpt_sft::compiler
