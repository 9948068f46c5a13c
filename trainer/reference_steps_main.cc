// reference_steps: the interpreter's run of what run_step runs - the same artifact's StepConfig,
// checkpoint, batches and schedule, on the interpreter (the definition of every op) - writing
// the losses run_step --expect_losses compares with.
//
//   reference_steps --artifact=step.gptart --checkpoint_dir=D --batches=b.jsonl --steps=5 --json=ref.json
//   reference_steps --artifact=step.gptart --seed=1 --steps=5 --json=ref.json   (synthetic, as run_step)
#include <fstream>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "base/command_line.h"
#include "trainer/eager_step.h"
#include "trainer/step_loop.h"
#include "trainer/config/step_source_flags.h"

ABSL_FLAG(int, steps, 5, "optimizer steps to run");
ABSL_FLAG(int, num_threads, 0, "kernel threads; 0: every core");
ABSL_FLAG(std::string, json, "", "write the losses here as JSON");

namespace gpt_sft::trainer {
namespace {

int Main() {
  absl::StatusOr<StepLoopInputs> in = OpenStepLoopInputs(StepLoopSourceFromFlags());
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
  gpt_sft::base::ParseCommandLine(argc, argv);
  return gpt_sft::trainer::Main();
}
