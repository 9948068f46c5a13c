// Getting a step's artifact for the trainer: compiled for the device's target, or loaded from
// the artifact cache, once per machine when several ranks run (rank 0 first; the others wait
// at a barrier, then load rank 0's artifact from the cache).
#ifndef GPT_SFT_TRAINER_STEP_COMPILE_H_
#define GPT_SFT_TRAINER_STEP_COMPILE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/builder/step_config.h"
#include "runtime/collectives/communicator.h"
#include "runtime/params/param_store.h"
#include "trainer/device_step.h"

namespace gpt_sft::trainer {

/// The step of `config` compiled (or loaded from `cache_dir`; empty: no cache) for the driver
/// of `options.device`, on that device.
absl::StatusOr<std::unique_ptr<DeviceStep>> CompileDeviceStep(const compiler::StepConfig& config,
                                                              runtime::ParamStore* params, const std::string& cache_dir,
                                                              DeviceStepOptions options);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_STEP_COMPILE_H_
