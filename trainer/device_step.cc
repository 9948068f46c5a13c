// Implements DeviceStep: open the device, compile or load the step for its target, load it,
// bind the state, and run the two entry points.
#include "trainer/device_step.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpt_sft::trainer {

using runtime::DType;
using runtime::Tensor;

namespace {

/// What computes the step's matmuls and attention on a GPU target, for the [VALIDATION] line
/// ("" on cpu, whose step calls the interpreter's kernels).
/// Whether some launch of `a` is the builtin `name`.
bool CallsBuiltin(const artifact::Artifact& a, std::string_view name) {
  for (const artifact::Function& f : a.functions) {
    for (const artifact::Launch& l : f.launches) {
      if (l.kind == artifact::LaunchKind::kBuiltin && l.name == name) return true;
    }
  }
  return false;
}

std::string KernelsNote(const artifact::Artifact& a) {
  if (a.target == "cpu") return "";
  // gemm.f32, gemm.bf16 and their batched forms (runtime/device/GEMM_BUILTIN.md).
  const bool vendor_gemm = CallsBuiltin(a, "gemm.f32") || CallsBuiltin(a, "gemm.bf16") ||
                           CallsBuiltin(a, "gemm_batched.f32") || CallsBuiltin(a, "gemm_batched.bf16");
  const std::string gemm = !vendor_gemm ? "the compiler's tiled gemm" : a.target == "cuda" ? "cuBLASLt" : "CLBlast";
  return absl::StrCat("matmuls: ", gemm, "; attention: ",
                      CallsBuiltin(a, "sdpa_fwd.cudnn") ? "cuDNN SDPA" : "the compiler's flash kernels");
}

/// What a device that does not open means for `a`: a step compiled with --attention=cudnn
/// needs cuDNN on an NVIDIA GPU, and the way out is a compile flag, not a device flag.
std::string DeviceRefusalHint(const artifact::Artifact& a) {
  if (!CallsBuiltin(a, "sdpa_fwd.cudnn") && !CallsBuiltin(a, "sdpa_bwd.cudnn")) return "";
  return "; this step's attention is cuDNN's (compiled with --attention=cudnn), which needs an NVIDIA GPU with cuDNN "
         "9: run it there, or compile the step with --attention=generated";
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Distinct kernels `function` launches.
int64_t DistinctKernels(const artifact::Artifact& a, const std::string& function) {
  const artifact::Function* f = a.FindFunction(function);
  if (f == nullptr) return 0;
  std::set<std::pair<int, std::string>> kernels;
  for (const artifact::Launch& l : f->launches) {
    if (l.kind == artifact::LaunchKind::kKernel || l.kind == artifact::LaunchKind::kBuiltin) {
      kernels.insert({l.module, l.name});
    }
  }
  return static_cast<int64_t>(kernels.size());
}

}  // namespace

DeviceStep::~DeviceStep() = default;

absl::StatusOr<std::unique_ptr<DeviceStep>> DeviceStep::Create(const artifact::Artifact& artifact,
                                                              runtime::ParamStore* params, DeviceStepOptions options,
                                                              ArtifactOrigin origin) {
  absl::StatusOr<compiler::StepConfig> config = compiler::StepConfig::FromJson(artifact.step_config);
  if (!config.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("artifact ", artifact.key, ": ", config.status().message()));
  }
  if (compiler::StoresF64(config->dtype)) {
    return absl::InvalidArgumentError(
        "the compiled step runs float32 and bfloat16 steps (f32 storage, the ParamStore's type), not f64");
  }
  if (!(params->config() == config->model)) {
    return absl::InvalidArgumentError(absl::StrCat("the ParamStore's model config ", params->config().ToJson(),
                                                   " differs from the artifact's ", config->model.ToJson()));
  }
  runtime::collectives::Communicator* comm = options.communicator;
  const int world = comm ? comm->world_size() : 1;
  if (world != config->dp_world_size) {
    return absl::InvalidArgumentError(absl::StrCat("the step is built for dp_world_size ", config->dp_world_size,
                                                   " but the communicator has ", world, " rank(s)"));
  }
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<DeviceStep> step(new DeviceStep(*config, params));
  step->owned_communicator_ = options.owned_communicator;
  runtime::device::DeviceOptions device_options;
  device_options.num_threads = options.num_threads;
  device_options.profile = options.profile;
  absl::StatusOr<std::unique_ptr<runtime::device::Device>> device =
      runtime::device::CreateDevice(options.device, device_options);
  if (!device.ok()) {
    return absl::Status(device.status().code(),
                        absl::StrCat("--device: ", device.status().message(), DeviceRefusalHint(artifact)));
  }
  step->device_ = *std::move(device);
  if (artifact.target != step->device_->driver()) {
    return absl::InvalidArgumentError(absl::StrCat("artifact ", artifact.key, " was compiled for ", artifact.target,
                                                   "; --device=", options.device, " needs one for ",
                                                   step->device_->driver()));
  }
  if (absl::Status s = step->Load(artifact, options, origin); !s.ok()) return s;
  if (absl::Status s = step->BindState(); !s.ok()) return s;
  // Compiling left the MLIR/LLVM working memory freed but resident in the heap; give it
  // back before the arena fills, so the step's peak RSS is the arena's, not arena + compiler.
  malloc_trim(0);
  step->report_.seconds = origin.seconds + SecondsSince(start);
  return step;
}

absl::Status DeviceStep::Load(const artifact::Artifact& artifact, const DeviceStepOptions& options,
                              const ArtifactOrigin& origin) {
  compilations_ = options.compilations;
  compilations_at_start_ = compilations_();
  runtime::ExecutableOptions exe_options;
  exe_options.communicator = options.communicator;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> exe =
      runtime::Executable::Load(artifact, device_.get(), exe_options);
  if (!exe.ok()) return exe.status();
  executable_ = *std::move(exe);
  DeviceCompileReport& report = report_;
  report.device = device_->name();
  report.target = artifact.target;
  report.source = origin.source;
  report.cache_hit = origin.cache_hit;
  report.cache_entry = origin.cache_entry;
  report.cache_log = origin.cache_log;
  report.compile_seconds = artifact.compile_seconds;
  report.key = artifact.key;
  report.arena_bytes = executable_->arena_bytes();
  report.launches = executable_->num_launches(compiler::kMicroStepFunction);
  report.kernels = DistinctKernels(artifact, compiler::kMicroStepFunction);
  report.summary = artifact.Summary();
  report.kernels_note = KernelsNote(artifact);
  return absl::OkStatus();
}

absl::Status DeviceStep::BindState() {
  // The weights: the ParamStore's own memory where the device can address it, else copies.
  params_on_host_ = true;
  for (runtime::Param& p : params_->params()) {
    const int64_t bytes = p.numel() * static_cast<int64_t>(sizeof(float));
    absl::StatusOr<std::unique_ptr<runtime::device::Buffer>> wrapped = device_->WrapHostMemory(p.data(), bytes);
    if (absl::IsUnimplemented(wrapped.status())) {
      params_on_host_ = false;
      break;
    }
    if (!wrapped.ok()) return wrapped.status();
    if (absl::Status s = executable_->Bind(p.name, runtime::device::WholeBuffer(**wrapped)); !s.ok()) return s;
    wrapped_params_.push_back(*std::move(wrapped));
  }
  if (absl::Status s = executable_->AllocateUnboundSlots(); !s.ok()) return s;
  if (!params_on_host_) {
    for (runtime::Param& p : params_->params()) {
      if (absl::Status s = executable_->Upload(p.name, p.data(), p.numel() * static_cast<int64_t>(sizeof(float)), &p.shape); !s.ok()) {
        return s;
      }
    }
  }
  // Gradients and optimizer state start at zero; the gradients' fill is recorded once and
  // replayed after every optimizer step.
  absl::StatusOr<std::unique_ptr<runtime::device::CommandBuffer>> zero = device_->CreateCommandBuffer();
  if (!zero.ok()) return zero.status();
  zero_gradients_ = *std::move(zero);
  absl::StatusOr<std::unique_ptr<runtime::device::CommandBuffer>> zero_state = device_->CreateCommandBuffer();
  if (!zero_state.ok()) return zero_state.status();
  for (const runtime::Param& p : params_->params()) {
    absl::StatusOr<runtime::device::BufferRange> grad = executable_->Slot(compiler::GradName(p.name));
    if (!grad.ok()) return grad.status();
    if (absl::Status s = zero_gradients_->AddFill(*grad, 0, "zero gradients"); !s.ok()) return s;
    for (const std::string& name : compiler::OptimizerStateNames({p.name, p.shape, p.group})) {
      absl::StatusOr<runtime::device::BufferRange> state = executable_->Slot(name);
      if (!state.ok()) return state.status();
      if (absl::Status s = (*zero_state)->AddFill(*state, 0, "zero optimizer state"); !s.ok()) return s;
    }
  }
  if (absl::Status s = device_->Submit(**zero_state); !s.ok()) return s;
  return ZeroGradients();
}

absl::Status DeviceStep::ZeroGradients() {
  if (absl::Status s = device_->Submit(*zero_gradients_); !s.ok()) return s;
  return device_->Synchronize();
}

absl::Status DeviceStep::ResetGradients() { return ZeroGradients(); }

absl::Status DeviceStep::UploadBatch(const StepBatch& batch) {
  const std::vector<std::string> names = compiler::BatchNames(config_.packed);
  const Tensor* tensors[] = {&batch.inputs, &batch.targets, &batch.segment_ids, &batch.positions};
  for (size_t i = 0; i < names.size(); ++i) {
    const Tensor& t = *tensors[i];
    if (!t.defined()) return absl::InvalidArgumentError(absl::StrCat("the batch has no '", names[i], "'"));
    if (t.dtype() != DType::kI32) {
      return absl::InvalidArgumentError(absl::StrCat("'", names[i], "' must be i32, got ", t.ShapeString()));
    }
    if (absl::Status s = executable_->Upload(names[i], t.raw_data(), static_cast<int64_t>(t.bytes()), &t.shape());
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<double> DeviceStep::MicroStep(const StepBatch& batch) {
  if (absl::Status s = UploadBatch(batch); !s.ok()) return s;
  if (absl::Status s = executable_->Run(compiler::kMicroStepFunction); !s.ok()) {
    (void)ZeroGradients();  // a half-run step may have added into some gradients
    return s;
  }
  float loss = 0;
  if (absl::Status s = executable_->DownloadResult(compiler::kMicroStepFunction, 0, &loss, sizeof(loss)); !s.ok()) {
    return s;
  }
  return double(loss);
}

absl::StatusOr<std::optional<NonFiniteValue>> DeviceStep::FirstNonFiniteGradient() {
  // Where the device's memory is the host's (cpu), each gradient is scanned where it lies; a
  // GPU's are downloaded one at a time (one pass over them per step, which a reduction inside
  // the compiled step would avoid).
  if (absl::Status s = device_->Synchronize(); !s.ok()) return s;
  for (size_t i = 0; i < params_->params().size(); ++i) {
    const runtime::Param& p = params_->params()[i];
    absl::StatusOr<runtime::device::BufferRange> slot = executable_->Slot(compiler::GradName(p.name));
    if (!slot.ok()) return slot.status();
    if (const void* host = slot->buffer->host_pointer(); host != nullptr) {
      const auto* data = reinterpret_cast<const float*>(static_cast<const char*>(host) + slot->offset);
      if (auto found = FindNonFinite(p.name, data, p.numel())) return found;
      continue;
    }
    absl::StatusOr<Tensor> g = Gradient(i);
    if (!g.ok()) return g.status();
    if (auto found = FindNonFinite(p.name, static_cast<const float*>(g->raw_data()), g->numel())) return found;
  }
  return std::nullopt;
}

absl::Status DeviceStep::OptimizerStep(double lr_multiplier) {
  const float lrm = static_cast<float>(lr_multiplier), step = static_cast<float>(steps_taken_ + 1);
  if (absl::Status s = executable_->Upload("lr_multiplier", &lrm, sizeof(lrm)); !s.ok()) return s;
  if (absl::Status s = executable_->Upload("step", &step, sizeof(step)); !s.ok()) return s;
  if (absl::Status s = executable_->Run(compiler::kOptimizerStepFunction); !s.ok()) {
    return absl::InternalError(absl::StrCat("optimizer step ", steps_taken_ + 1, " failed; the weights and the ",
                                            "optimizer state may be partly updated: ", s.message()));
  }
  ++steps_taken_;
  return ZeroGradients();
}

absl::Status DeviceStep::SyncParamsToHost() {
  if (params_on_host_) return absl::OkStatus();
  for (runtime::Param& p : params_->params()) {
    if (absl::Status s = executable_->Download(p.name, p.data(), p.numel() * static_cast<int64_t>(sizeof(float))); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status DeviceStep::BeginEvaluation() {
  if (absl::Status s = executable_->ReleaseScratchMemory(); !s.ok()) return s;
  return SyncParamsToHost();
}

int64_t DeviceStep::Recompilations() const { return compilations_() - compilations_at_start_; }

std::optional<CompileSummary> DeviceStep::Compilation() const {
  return CompileSummary{report_.cache_hit, report_.seconds, report_.compile_seconds, report_.key, report_.arena_bytes};
}

std::string DeviceStep::ValidationLine() const {
  const DeviceCompileReport& r = report_;
  const int world = config_.dp_world_size;
  return absl::StrCat(
      "[VALIDATION] ✓ Model is compiled (static batch [", config_.batch_size, ", ", config_.seq_len, "]; device ",
      r.device, "; artifact ", r.key, " for ", r.target, ", ",
      r.source == ArtifactOrigin::Source::kCache
          ? absl::StrFormat("loaded from the compile cache in %.3f s (compiled earlier in %.2f s)", r.seconds,
                            r.compile_seconds)
      : r.source == ArtifactOrigin::Source::kCompiled
          ? absl::StrFormat("compiled in %.2f s", r.seconds)
          : absl::StrFormat("loaded from its file in %.3f s (compiled earlier in %.2f s)", r.seconds, r.compile_seconds),
      "; arena ", absl::StrFormat("%.1f MiB", r.arena_bytes / 1048576.0), ", ", r.launches,
      " launches per micro-step, ", r.kernels, " distinct kernels",
      r.kernels_note.empty() ? std::string() : absl::StrCat("; ", r.kernels_note),
      world > 1 ? absl::StrCat("; gradients averaged over ", world, " ranks in the step") : std::string(), ")");
}

absl::StatusOr<Tensor> DeviceStep::Gradient(size_t i) {
  const runtime::Param& p = params_->params().at(i);
  Tensor g = Tensor::Empty(DType::kF32, p.shape);
  if (absl::Status s = executable_->Download(compiler::GradName(p.name), g.raw_data(), static_cast<int64_t>(g.bytes()));
      !s.ok()) {
    return s;
  }
  return g;
}

absl::StatusOr<OptimizerState> DeviceStep::ExportOptimizerState() {
  OptimizerState out;
  out.steps_taken = steps_taken_;
  for (auto& [name, shape] : OptimizerStateLayout(*params_)) {
    Tensor t = Tensor::Empty(DType::kF32, shape);
    if (absl::Status s = executable_->Download(name, t.raw_data(), static_cast<int64_t>(t.bytes())); !s.ok()) return s;
    out.tensors.emplace_back(std::move(name), std::move(t));
  }
  return out;
}

absl::Status DeviceStep::ImportOptimizerState(const OptimizerState& state) {
  if (absl::Status s = CheckOptimizerStateLayout(*params_, state); !s.ok()) return s;
  for (const auto& [name, t] : state.tensors) {
    if (absl::Status s = executable_->Upload(name, t.raw_data(), static_cast<int64_t>(t.bytes()), &t.shape()); !s.ok()) {
      return s;
    }
  }
  steps_taken_ = state.steps_taken;
  return ZeroGradients();
}

}  // namespace gpt_sft::trainer
