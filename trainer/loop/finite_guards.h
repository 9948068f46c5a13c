// FiniteGuards: nothing non-finite is ever applied or saved. Before every update the loop asks
// every rank whether its accumulated gradients are finite (the loss is checked before that);
// before every save, every weight and optimizer value. A failure ends the run with an error
// that names the step, the tensor and element, and the newest saved step to go on from.
#ifndef GPT_SFT_TRAINER_LOOP_FINITE_GUARDS_H_
#define GPT_SFT_TRAINER_LOOP_FINITE_GUARDS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runtime/collectives/communicator.h"
#include "runtime/params/param_store.h"
#include "trainer/optimizer_state.h"
#include "trainer/train_step.h"

namespace gpt_sft::trainer {

/// Where a run stopped by a non-finite value can go on from: its newest saved step, or none.
std::string LastGoodState(const std::string& out_dir);

/// OK when every weight and every optimizer state value is finite; else DataLoss naming the
/// step, the first tensor holding a non-finite value and the element.
absl::Status CheckAllFinite(const runtime::ParamStore& params, const OptimizerState& optimizer, int64_t step,
                            const std::string& out_dir);

/// Before step `step`'s update: every rank's accumulated gradients are finite, or the run ends
/// here, the update not applied, naming the first bad gradient (on this rank or another).
absl::Status CheckGradientsFinite(TrainStep& training, runtime::collectives::Communicator& world, int64_t step,
                                  const std::string& out_dir);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_LOOP_FINITE_GUARDS_H_
