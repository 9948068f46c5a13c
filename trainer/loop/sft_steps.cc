#include "trainer/loop/sft_steps.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/step_compiler.h"
#include "runtime/collectives/nccl_communicator.h"
#include "trainer/launch/rank_launcher.h"
#include "trainer/step_compile.h"

namespace gpt_sft::trainer {
namespace {

/// NCCL over `world` on the GPU `device` names ("cuda:<n>"; "cuda": rank modulo the GPUs).
absl::StatusOr<std::shared_ptr<runtime::collectives::Communicator>> MakeNcclForDevice(
    const std::string& device, runtime::collectives::Communicator& world) {
  runtime::collectives::NcclOptions options;
  if (const size_t colon = device.find(':'); colon != std::string::npos) {
    if (!absl::SimpleAtoi(device.substr(colon + 1), &options.device)) options.device = -1;
  }
  absl::StatusOr<std::unique_ptr<runtime::collectives::Communicator>> nccl =
      runtime::collectives::MakeNcclCommunicator(world, options);
  if (!nccl.ok()) {
    return absl::Status(nccl.status().code(), absl::StrCat("--device=", device, " on ", world.world_size(),
                                                           " ranks reduces gradients with NCCL: ",
                                                           nccl.status().message()));
  }
  return std::shared_ptr<runtime::collectives::Communicator>(std::move(*nccl));
}

}  // namespace

absl::StatusOr<std::unique_ptr<TrainStep>> MakeCompiledStep(const TrainerOptions& o, const compiler::StepConfig& config,
                                                            runtime::ParamStore* params,
                                                            runtime::collectives::Communicator& world,
                                                            const std::string& base_dir) {
  const std::string cache_dir = o.compile_cache_dir.empty() ? base_dir + "/compile_cache" : o.compile_cache_dir;
  runtime::collectives::Communicator* comm = o.world_size > 1 ? &world : nullptr;
  DeviceStepOptions options;
  options.device = o.world_size > 1 ? DeviceForLocalRank(o.device, LocalRank()) : o.device;
  options.num_threads = o.num_threads;
  options.communicator = comm;
  if (comm != nullptr && options.device.rfind("cuda", 0) == 0) {
    // GPU ranks reduce their gradients with NCCL, in device memory, over the MPI job's world.
    absl::StatusOr<std::shared_ptr<runtime::collectives::Communicator>> nccl = MakeNcclForDevice(options.device, world);
    if (!nccl.ok()) return nccl.status();
    options.owned_communicator = *std::move(nccl);
    options.communicator = options.owned_communicator.get();
  }
  absl::StatusOr<std::unique_ptr<DeviceStep>> made = CompileDeviceStep(config, params, cache_dir, options);
  if (!made.ok()) return made.status();
  if (!(*made)->compile_report().cache_log.empty() && o.rank == 0) {
    std::cout << "compile cache: " << (*made)->compile_report().cache_log << std::endl;
  }
  return std::unique_ptr<TrainStep>(std::move(*made));
}

absl::Status CompileAgainForTest(const TrainerOptions& o, const compiler::StepConfig& config) {
  absl::StatusOr<compiler::Target> target = compiler::ParseTarget(o.device.substr(0, o.device.find(':')));
  if (!target.ok()) return target.status();
  return compiler::CompileStep(config, *target).status();
}

}  // namespace gpt_sft::trainer
