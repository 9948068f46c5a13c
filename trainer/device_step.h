// DeviceStep: the compiled training step on a device (--compile=true, --device=cpu|opencl).
// It runs an artifact's micro_step and optimizer_step with the device runtime
// (runtime/executable) over slots bound to device memory:
//   * parameters: the ParamStore's own memory where the driver can address it (the cpu driver
//     wraps it, so the weights are updated in place and nothing is synced), else device buffers
//     filled from the ParamStore at creation and brought back by SyncParamsToHost;
//   * gradients and optimizer state: device buffers, zeroed at creation (gradients again
//     after every optimizer step, by a recorded fill);
//   * the batch and the scalars: uploaded per step, checked against the compiled shapes.
// Evaluation and checkpoints stay with the interpreter and the ParamStore (TrainStep).
// MLIR-free: the artifact comes compiled (trainer/step_compile.h) or from a file (the artifact
// runner, //trainer:run_step).
//
//   auto step = DeviceStep::Create(artifact, &params, {.device = "opencl"});
//   for (micro-batches) loss = (*step)->MicroStep(batch);
//   (*step)->OptimizerStep(lrm);
#ifndef GPT_SFT_TRAINER_DEVICE_STEP_H_
#define GPT_SFT_TRAINER_DEVICE_STEP_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "artifact/artifact.h"
#include "compiler/builder/step_config.h"
#include "runtime/collectives/communicator.h"
#include "runtime/device/device.h"
#include "runtime/executable/executable.h"
#include "runtime/params/param_store.h"
#include "trainer/train_step.h"

namespace gpt_sft::trainer {

struct DeviceStepOptions {
  std::string device = "cpu";  // a runtime::device::CreateDevice spec: cpu, opencl, opencl:<n>
  int num_threads = 0;         // the cpu driver's kernel threads (0: every core)
  bool profile = false;        // time every launch (the device's TakeProfile)
  /// The data-parallel ranks (null: one); its world size must be the step's dp_world_size.
  runtime::collectives::Communicator* communicator = nullptr;
  /// A communicator made for this step that the step keeps alive (NCCL for cuda ranks, which
  /// `communicator` then points to).
  std::shared_ptr<runtime::collectives::Communicator> owned_communicator;
  /// How many steps this process has compiled so far (compiler::StepCompilations when the
  /// caller compiles): what is compiled after the step is made counts as a recompilation.
  std::function<int64_t()> compilations = [] { return int64_t{0}; };
};

/// How the artifact was obtained, for the report (trainer/step_compile.h fills it).
struct ArtifactOrigin {
  /// Where it came from, for the log: compiled in this process, the compile cache, or a file.
  enum class Source { kCompiled, kCache, kFile };
  Source source = Source::kFile;
  bool cache_hit = false;
  double seconds = 0;  // compiling or loading it from the cache
  std::string cache_entry;
  std::string cache_log;  // what the compile cache did, in order ("; then " between events)
};

/// What getting the step ready cost and what it is, for the trainer's log and the benchmark.
struct DeviceCompileReport {
  std::string device;          // the device's name ("opencl: PoCL 3.1, ...")
  std::string target;          // "cpu", "opencl"
  ArtifactOrigin::Source source = ArtifactOrigin::Source::kFile;
  bool cache_hit = false;
  double seconds = 0;          // compile (miss) or cache load (hit), + load onto the device
  double compile_seconds = 0;  // of the compilation that produced the artifact
  std::string key;
  std::string cache_entry;
  std::string cache_log;
  int64_t arena_bytes = 0;
  int64_t launches = 0;        // micro_step's
  int64_t kernels = 0;         // distinct kernels micro_step launches
  std::string summary;         // artifact::Artifact::Summary()
  std::string kernels_note;    // GPU targets: what computes the matmuls and attention
};

class DeviceStep : public TrainStep {
 public:
  /// `artifact` must have been compiled for the device's driver from a step of `params`'
  /// model (its step_config says which); errors name the mismatch.
  static absl::StatusOr<std::unique_ptr<DeviceStep>> Create(const artifact::Artifact& artifact,
                                                            runtime::ParamStore* params, DeviceStepOptions options,
                                                            ArtifactOrigin origin = {});
  ~DeviceStep() override;

  std::string mode() const override { return "compiled"; }
  std::string ValidationLine() const override;
  absl::StatusOr<double> MicroStep(const StepBatch& batch) override;
  absl::StatusOr<std::optional<NonFiniteValue>> FirstNonFiniteGradient() override;
  absl::Status OptimizerStep(double lr_multiplier) override;
  absl::Status SyncParamsToHost() override;
  absl::Status BeginEvaluation() override;
  int64_t Recompilations() const override;
  std::optional<CompileSummary> Compilation() const override;
  absl::StatusOr<OptimizerState> ExportOptimizerState() override;
  absl::Status ImportOptimizerState(const OptimizerState& state) override;

  /// Drops the accumulated gradients (zeros).
  absl::Status ResetGradients();
  /// The accumulated gradient of parameter i (ParamStore order), copied to the host.
  absl::StatusOr<runtime::Tensor> Gradient(size_t i);
  int64_t steps_taken() const { return steps_taken_; }
  const compiler::StepConfig& config() const { return config_; }
  const DeviceCompileReport& compile_report() const { return report_; }
  runtime::Executable& executable() { return *executable_; }
  runtime::device::Device& device() { return *device_; }

 private:
  DeviceStep(const compiler::StepConfig& config, runtime::ParamStore* params) : config_(config), params_(params) {}
  absl::Status Load(const artifact::Artifact& artifact, const DeviceStepOptions& options, const ArtifactOrigin& origin);
  absl::Status BindState();
  absl::Status UploadBatch(const StepBatch& batch);
  absl::Status ZeroGradients();

  compiler::StepConfig config_;
  runtime::ParamStore* params_;
  // Before the device and the executable, so that it outlives the commands that call it.
  std::shared_ptr<runtime::collectives::Communicator> owned_communicator_;
  std::unique_ptr<runtime::device::Device> device_;
  std::unique_ptr<runtime::Executable> executable_;
  std::vector<std::unique_ptr<runtime::device::Buffer>> wrapped_params_;  // cpu: the ParamStore's memory
  bool params_on_host_ = false;
  std::unique_ptr<runtime::device::CommandBuffer> zero_gradients_;
  DeviceCompileReport report_;
  std::function<int64_t()> compilations_;
  int64_t compilations_at_start_ = 0;
  int64_t steps_taken_ = 0;
};

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_DEVICE_STEP_H_
