// OptimizerState: what the optimizer carries from step to step, which a resumed run must
// start from. For each parameter in ParamStore order its compiler::OptimizerStateNames tensors
// (AdamW's exp_avg and exp_avg_sq, or Muon's momentum_buffer; f32, the parameter's shape), and
// the optimizer steps taken so far (AdamW's bias correction counts them). Both training steps
// (EagerStep, DeviceStep) export and import it; optimizer_state_file.h stores it.
#ifndef GPT_SFT_TRAINER_OPTIMIZER_STATE_H_
#define GPT_SFT_TRAINER_OPTIMIZER_STATE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "runtime/base/tensor.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::trainer {

struct OptimizerState {
  std::vector<std::pair<std::string, runtime::Tensor>> tensors;
  int64_t steps_taken = 0;
};

/// The names and shapes the state of `params`' optimizer has, in order.
std::vector<std::pair<std::string, std::vector<int64_t>>> OptimizerStateLayout(const runtime::ParamStore& params);

/// OK when `state` has exactly that layout (f32 tensors) and steps_taken >= 0; else an error
/// naming the first tensor that differs, with both names or shapes.
absl::Status CheckOptimizerStateLayout(const runtime::ParamStore& params, const OptimizerState& state);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_OPTIMIZER_STATE_H_
