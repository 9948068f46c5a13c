#include "trainer/optimizer_state.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/builder/step_config.h"

namespace gpt_sft::trainer {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

}  // namespace

std::vector<std::pair<std::string, std::vector<int64_t>>> OptimizerStateLayout(const runtime::ParamStore& params) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> layout;
  for (const runtime::Param& p : params.params()) {
    for (std::string& name : compiler::OptimizerStateNames({p.name, p.shape, p.group})) {
      layout.emplace_back(std::move(name), p.shape);
    }
  }
  return layout;
}

absl::Status CheckOptimizerStateLayout(const runtime::ParamStore& params, const OptimizerState& state) {
  const auto layout = OptimizerStateLayout(params);
  if (state.tensors.size() != layout.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the optimizer state has ", state.tensors.size(),
                                                   " tensors; this model's optimizer has ", layout.size()));
  }
  for (size_t i = 0; i < layout.size(); ++i) {
    const auto& [name, tensor] = state.tensors[i];
    if (name != layout[i].first) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer state tensor ", i, " is '", name, "'; this model's is '", layout[i].first, "'"));
    }
    if (tensor.dtype() != runtime::DType::kF32 || tensor.shape() != layout[i].second) {
      return absl::InvalidArgumentError(absl::StrCat("optimizer state '", name, "' is ", tensor.ShapeString(),
                                                     "; this model's is f32", ShapeText(layout[i].second)));
    }
  }
  if (state.steps_taken < 0) {
    return absl::InvalidArgumentError(absl::StrCat("optimizer steps taken ", state.steps_taken, " is negative"));
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::trainer
