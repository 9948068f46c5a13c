// run_step: the artifact runner. It runs a compiled step (an artifact file, gptc --emit=artifact
// or the trainer's compile cache) on a device for a few steps, from a checkpoint and a file of
// batches, and prints each step's loss and time: the binary that goes to a machine with no
// compiler (it links neither MLIR nor LLVM: //third_party/bazel:run_step_is_mlir_free_test).
//
//   run_step --artifact=step.gptart --checkpoint_dir=D --batches=b.jsonl --steps=5 --device=opencl
//            [--json=out.json] [--expect_losses=reference.json --loss_tolerance=1e-4]
//
// With neither --checkpoint_dir nor --batches it times the step on synthetic inputs (nanochat's
// init from --seed, --synthetic_batches random batches of the artifact's shape): a large model
// can be timed where no checkpoint can travel.
//
// --expect_losses compares every step's loss with a reference run's (//trainer:reference_steps,
// the interpreter on the same inputs): exit 1 when one differs by more than the tolerance
// (relative). Exit 2 for a bad flag or input file.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/command_line.h"
#include "nlohmann/json.hpp"
#include "trainer/device_step.h"
#include "trainer/step_loop.h"
#include "trainer/config/step_source_flags.h"
#include "trainer/report/throughput_meter.h"

ABSL_FLAG(int, steps, 5, "optimizer steps to run (grad_accum_steps micro-batches each)");
ABSL_FLAG(int, warmup_steps, 1, "steps left out of the timing");
ABSL_FLAG(std::string, device, "cpu", "cpu, opencl or opencl:<n>, cuda or cuda:<n>");
ABSL_FLAG(int, num_threads, 0, "the cpu driver's kernel threads; 0: every core");
ABSL_FLAG(std::string, json, "", "write the run's figures here as JSON");
ABSL_FLAG(bool, profile, false, "time every launch by kernel (after the warm-up) and add the 25 costliest to the JSON");
ABSL_FLAG(std::string, expect_losses, "", "a reference run's JSON: every step's loss must match it");
ABSL_FLAG(double, loss_tolerance, 1e-4, "relative tolerance of --expect_losses");

namespace gpt_sft::trainer {
namespace {

/// The 25 costliest launch labels of the timed steps, with their seconds per step.
nlohmann::ordered_json ProfileJson(std::vector<runtime::device::ProfileEntry> profile, size_t steps) {
  std::sort(profile.begin(), profile.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const double timed = std::max<double>(1, double(steps) - absl::GetFlag(FLAGS_warmup_steps));
  for (size_t i = 0; i < profile.size() && i < 25; ++i) {
    out.push_back({{"label", profile[i].label},
                   {"calls_per_step", profile[i].calls / timed},
                   {"seconds_per_step", profile[i].seconds / timed}});
  }
  return out;
}

int Fail(const absl::Status& s, int code) {
  std::cerr << "run_step: " << s.message() << std::endl;
  return code;
}

int Main() {
  absl::StatusOr<StepLoopInputs> in = OpenStepLoopInputs(StepLoopSourceFromFlags());
  if (!in.ok()) return Fail(in.status(), 2);
  DeviceStepOptions options;
  options.device = absl::GetFlag(FLAGS_device);
  options.num_threads = absl::GetFlag(FLAGS_num_threads);
  options.profile = absl::GetFlag(FLAGS_profile);
  absl::StatusOr<std::unique_ptr<DeviceStep>> step = DeviceStep::Create(in->artifact, in->params.get(), options);
  if (!step.ok()) return Fail(step.status(), absl::IsInvalidArgument(step.status()) ? 2 : 1);
  std::cerr << (*step)->ValidationLine() << "\n" << in->artifact.Summary() << std::endl;
  StepLoopOptions loop;
  loop.steps = absl::GetFlag(FLAGS_steps);
  loop.grad_accum_steps = in->config.grad_accum_steps;
  loop.warmup_steps = absl::GetFlag(FLAGS_warmup_steps);
  if (options.profile) loop.after_warmup = [&] { (*step)->device().TakeProfile(); };
  absl::StatusOr<StepLoopResult> result = RunSteps(**step, in->batches, loop);
  if (!result.ok()) return Fail(result.status(), 1);
  for (size_t i = 0; i < result->losses.size(); ++i) {
    std::cout << absl::StrFormat("step %d | loss %.6f | %.1f ms", i, result->losses[i], 1e3 * result->step_seconds[i])
              << std::endl;
  }
  nlohmann::ordered_json fields = {{"device", (*step)->compile_report().device},
                                   {"target", in->artifact.target},
                                   {"artifact", in->artifact.key},
                                   {"launches_per_micro_step", (*step)->compile_report().launches},
                                   {"kernels_per_micro_step", (*step)->compile_report().kernels},
                                   {"device_bytes", (*step)->executable().allocated_bytes()},
                                   {"num_params", in->params->NumParams()},
                                   {"flops_per_token", in->config.model.FlopsPerToken()},
                                   {"peak_rss_bytes", ThroughputMeter::PeakRssBytes()}};
  if (options.profile) fields["profile"] = ProfileJson((*step)->device().TakeProfile(), result->losses.size());
  const std::string json = StepLoopJson(*result, fields.dump());
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    std::ofstream(path) << json << "\n";
  }
  if (const std::string path = absl::GetFlag(FLAGS_expect_losses); !path.empty()) {
    absl::StatusOr<std::vector<double>> expected = ReadLosses(path);
    if (!expected.ok()) return Fail(expected.status(), 2);
    if (expected->size() != result->losses.size()) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("--expect_losses=", path, " holds ", expected->size(),
                                                          " steps' losses; this run made --steps=", result->losses.size(),
                                                          " (the schedule depends on it: run the same count)")),
                  2);
    }
    const double tolerance = absl::GetFlag(FLAGS_loss_tolerance);
    bool ok = true;
    for (size_t i = 0; ok && i < expected->size(); ++i) {
      const double rel = std::fabs(result->losses[i] - (*expected)[i]) / std::max(1e-12, std::fabs((*expected)[i]));
      std::cout << absl::StrFormat("step %d | loss %.6f | reference %.6f | relative difference %.2e", i,
                                   result->losses[i], (*expected)[i], rel)
                << std::endl;
      ok = rel <= tolerance;
    }
    if (!ok) {
      std::cerr << "run_step: the losses differ from " << path << " by more than " << tolerance << std::endl;
      return 1;
    }
    std::cout << "losses match the reference within " << tolerance << std::endl;
  }
  return 0;
}

}  // namespace
}  // namespace gpt_sft::trainer

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("run_step: run a compiled training step (an artifact) on a device");
  gpt_sft::base::ParseCommandLine(argc, argv);
  return gpt_sft::trainer::Main();
}
