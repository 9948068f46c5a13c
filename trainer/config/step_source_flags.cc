// Defines the step runners' input flags.
#include "trainer/config/step_source_flags.h"

#include <cstdint>
#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, artifact, "", "the compiled step (a .gptart file)");
ABSL_FLAG(std::string, checkpoint_dir, "", "directory holding model_%06d.safetensors and meta_%06d.json");
ABSL_FLAG(int64_t, step, -1, "checkpoint step to load; -1: the latest");
ABSL_FLAG(std::string, batches, "", "JSON lines of batches (//data:dump_batch --json), of the artifact's shape");
ABSL_FLAG(uint64_t, seed, 1, "with no --checkpoint_dir and no --batches: the synthetic weights' and batches' seed");
ABSL_FLAG(int, synthetic_batches, 4, "with no --checkpoint_dir and no --batches: how many synthetic batches");

namespace gpt_sft::trainer {

StepLoopSource StepLoopSourceFromFlags() {
  StepLoopSource source;
  source.artifact_path = absl::GetFlag(FLAGS_artifact);
  source.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  source.step = absl::GetFlag(FLAGS_step);
  source.batches_path = absl::GetFlag(FLAGS_batches);
  source.seed = absl::GetFlag(FLAGS_seed);
  source.synthetic_batches = absl::GetFlag(FLAGS_synthetic_batches);
  return source;
}

}  // namespace gpt_sft::trainer
