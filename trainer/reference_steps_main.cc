// reference_steps: the interpreter's run of what run_step runs - the same artifact's StepConfig,
// checkpoint, batches and schedule, on the interpreter (the definition of every op) - writing
// the losses run_step --expect_losses compares with.
//
//   reference_steps --artifact=step.gptart --checkpoint_dir=D --batches=b.jsonl --steps=5 --json=ref.json
//   reference_steps --artifact=step.gptart --seed=1 --steps=5 --json=ref.json   (synthetic, as run_step)
#include <fstream>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "trainer/eager_step.h"
#include "trainer/step_loop.h"

ABSL_FLAG(std::string, artifact, "", "the compiled step whose StepConfig to run (a .gptart file)");
ABSL_FLAG(std::string, checkpoint_dir, "", "directory holding model_%06d.safetensors and meta_%06d.json");
ABSL_FLAG(int64_t, step, -1, "checkpoint step to load; -1: the latest");
ABSL_FLAG(std::string, batches, "", "JSON lines of batches (//data:dump_batch --json)");
ABSL_FLAG(int, steps, 5, "optimizer steps to run");
ABSL_FLAG(uint64_t, seed, 1, "with no --checkpoint_dir and no --batches: the synthetic weights' and batches' seed");
ABSL_FLAG(int, synthetic_batches, 4, "with no --checkpoint_dir and no --batches: how many synthetic batches");
ABSL_FLAG(int, num_threads, 0, "kernel threads; 0: every core");
ABSL_FLAG(std::string, json, "", "write the losses here as JSON");

namespace gpt_sft::trainer {
namespace {

StepLoopSource SourceFromFlags() {
  StepLoopSource source;
  source.artifact_path = absl::GetFlag(FLAGS_artifact);
  source.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  source.step = absl::GetFlag(FLAGS_step);
  source.batches_path = absl::GetFlag(FLAGS_batches);
  source.seed = absl::GetFlag(FLAGS_seed);
  source.synthetic_batches = absl::GetFlag(FLAGS_synthetic_batches);
  return source;
}

int Main() {
  absl::StatusOr<StepLoopInputs> in = OpenStepLoopInputs(SourceFromFlags());
  if (!in.ok()) {
    std::cerr << "reference_steps: " << in.status().message() << std::endl;
    return 2;
  }
  runtime::InterpreterOptions options;
  options.num_threads = absl::GetFlag(FLAGS_num_threads);
  compiler::StepConfig config = in->config;
  config.dp_world_size = 1;  // one process plays every rank's batches
  absl::StatusOr<std::unique_ptr<EagerStep>> step = EagerStep::Create(config, in->params.get(), options);
  if (!step.ok()) {
    std::cerr << "reference_steps: " << step.status().message() << std::endl;
    return 1;
  }
  StepLoopOptions loop;
  loop.steps = absl::GetFlag(FLAGS_steps);
  loop.grad_accum_steps = config.grad_accum_steps;
  absl::StatusOr<StepLoopResult> result = RunSteps(**step, in->batches, loop);
  if (!result.ok()) {
    std::cerr << "reference_steps: " << result.status().message() << std::endl;
    return 1;
  }
  for (size_t i = 0; i < result->losses.size(); ++i) {
    std::cout << absl::StrFormat("step %d | loss %.6f", i, result->losses[i]) << std::endl;
  }
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    std::ofstream(path) << StepLoopJson(*result, R"({"device": "interpreter"})") << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace gpt_sft::trainer

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("reference_steps: the interpreter's losses for run_step --expect_losses");
  absl::ParseCommandLine(argc, argv);
  return gpt_sft::trainer::Main();
}
