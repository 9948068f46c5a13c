#include "compiler/builder/step_config.h"

#include <cmath>

#include "absl/strings/str_cat.h"

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

}  // namespace gpt_sft::compiler
