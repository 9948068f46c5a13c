// The flags that say where a step runner's inputs come from (--artifact, --checkpoint_dir,
// --step, --batches, --seed, --synthetic_batches), shared by //trainer:run_step and
// //trainer:reference_steps so that the same command line gives both the same inputs.
#ifndef GPT_SFT_TRAINER_CONFIG_STEP_SOURCE_FLAGS_H_
#define GPT_SFT_TRAINER_CONFIG_STEP_SOURCE_FLAGS_H_

#include "trainer/step_loop.h"

namespace gpt_sft::trainer {

/// The StepLoopSource the flags describe.
StepLoopSource StepLoopSourceFromFlags();

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_CONFIG_STEP_SOURCE_FLAGS_H_
