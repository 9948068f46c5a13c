// SftSteps: the training step compiled for --device (or loaded from the compile cache), with
// NCCL between GPU ranks, as the run loop takes it.
#ifndef GPT_SFT_TRAINER_LOOP_SFT_STEPS_H_
#define GPT_SFT_TRAINER_LOOP_SFT_STEPS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/builder/step_config.h"
#include "runtime/collectives/communicator.h"
#include "runtime/params/param_store.h"
#include "trainer/train_step.h"
#include "trainer/config/trainer_options.h"

namespace gpt_sft::trainer {

/// The step compiled for --device (or loaded from the compile cache) on that device.
absl::StatusOr<std::unique_ptr<TrainStep>> MakeCompiledStep(const TrainerOptions& o, const compiler::StepConfig& config,
                                                            runtime::ParamStore* params,
                                                            runtime::collectives::Communicator& world,
                                                            const std::string& base_dir);

/// --test_only_force_recompile: the step compiled a second time for its target.
absl::Status CompileAgainForTest(const TrainerOptions& o, const compiler::StepConfig& config);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_LOOP_SFT_STEPS_H_
