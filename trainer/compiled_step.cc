// Implements CompiledStep.
#include "trainer/compiled_step.h"

#include <malloc.h>

#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/codegen/step_compiler.h"

namespace gpt_sft::trainer {

using runtime::DType;
using runtime::Tensor;

CompiledStep::~CompiledStep() = default;

absl::StatusOr<std::unique_ptr<CompiledStep>> CompiledStep::Create(const compiler::StepConfig& config,
                                                                  runtime::ParamStore* params,
                                                                  CompiledStepOptions options) {
  if (config.dtype != compiler::ElementType::kF32) {
    return absl::InvalidArgumentError("CompiledStep runs float32 steps (the ParamStore's type)");
  }
  if (!(params->config() == config.model)) {
    return absl::InvalidArgumentError(absl::StrCat("the ParamStore's model config ", params->config().ToJson(),
                                                   " differs from the step's ", config.model.ToJson()));
  }
  runtime::collectives::Communicator* comm = options.communicator;
  const int world = comm ? comm->world_size() : 1;
  if (world != config.dp_world_size) {
    return absl::InvalidArgumentError(absl::StrCat("the step is built for dp_world_size ", config.dp_world_size,
                                                   " but the communicator has ", world, " rank(s)"));
  }
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CompiledStep> step(new CompiledStep(config, params));
  compiler::StepArtifact artifact;
  CompileReport& report = step->report_;
  if (options.cache_dir.empty()) {
    absl::StatusOr<compiler::StepArtifact> compiled = compiler::CompileHostStep(config);
    if (!compiled.ok()) return compiled.status();
    artifact = *std::move(compiled);
  } else {
    // Rank 0 first; the barrier then lets the others find its artifact in the cache.
    const bool first = comm == nullptr || comm->rank() == 0;
    absl::StatusOr<compiler::HostCompileOutcome> outcome;
    if (first) outcome = compiler::CompileOrLoadHostStep(config, options.cache_dir);
    if (world > 1) {
      if (absl::Status s = comm->Barrier(); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat("waiting for rank 0 to compile the step: ", s.message()));
      }
    }
    if (!first) outcome = compiler::CompileOrLoadHostStep(config, options.cache_dir);
    if (!outcome.ok()) return outcome.status();
    report.cache_hit = outcome->cache_hit;
    report.cache_entry = outcome->cache_entry;
    report.cache_note = outcome->cache_note;
    artifact = std::move(outcome->artifact);
  }
  runtime::HostExecutableOptions exe_options;
  exe_options.num_threads = options.num_threads;
  exe_options.profile = options.profile;
  exe_options.communicator = comm;
  absl::StatusOr<std::unique_ptr<runtime::HostExecutable>> exe = runtime::HostExecutable::Load(artifact, exe_options);
  if (!exe.ok()) return exe.status();
  step->executable_ = *std::move(exe);
  // Compiling leaves the MLIR/LLVM working memory freed but resident in the heap; give it
  // back before the arena fills, so the step's peak RSS is the arena's, not arena + compiler.
  malloc_trim(0);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.compile_seconds = artifact.compile_seconds;
  report.key = artifact.key;
  report.arena_bytes = step->executable_->arena_bytes();
  report.launches = step->executable_->num_launches(compiler::kMicroStepFunction);
  report.kernels = static_cast<int>(artifact.kernels.kernels.size());
  step->compilations_at_start_ = compiler::StepCompilations();

  // Buffers and argument lists, once.
  std::vector<Tensor> views;
  for (const runtime::Param& p : params->params()) {
    views.push_back(Tensor::View(DType::kF32, p.shape, p.data()));
    step->grads_.push_back(Tensor::Zeros(DType::kF32, p.shape));
    if (!step->grads_.back().defined()) return absl::ResourceExhaustedError("no memory for the gradient of " + p.name);
    const size_t count = compiler::OptimizerStateNames({p.name, p.shape, p.group}).size();
    for (size_t k = 0; k < count; ++k) {
      step->state_.push_back(Tensor::Zeros(DType::kF32, p.shape));
      if (!step->state_.back().defined()) return absl::ResourceExhaustedError("no memory for optimizer state of " + p.name);
    }
  }
  step->micro_args_ = views;
  step->micro_args_.insert(step->micro_args_.end(), step->grads_.begin(), step->grads_.end());
  step->batch_first_ = step->micro_args_.size();
  step->micro_args_.resize(step->batch_first_ + (config.packed ? 4 : 2));
  step->lr_multiplier_ = Tensor::Scalar<float>(1.f);
  step->step_number_ = Tensor::Scalar<float>(1.f);
  step->optimizer_args_ = views;
  step->optimizer_args_.insert(step->optimizer_args_.end(), step->grads_.begin(), step->grads_.end());
  step->optimizer_args_.insert(step->optimizer_args_.end(), step->state_.begin(), step->state_.end());
  step->optimizer_args_.push_back(step->lr_multiplier_);
  step->optimizer_args_.push_back(step->step_number_);
  return step;
}

int64_t CompiledStep::Recompilations() const { return compiler::StepCompilations() - compilations_at_start_; }

std::optional<CompileSummary> CompiledStep::Compilation() const {
  return CompileSummary{report_.cache_hit, report_.seconds, report_.compile_seconds, report_.key, report_.arena_bytes};
}

std::string CompiledStep::ValidationLine() const {
  const CompileReport& r = report_;
  return absl::StrCat(
      "[VALIDATION] ✓ Model is compiled (static batch [", config_.batch_size, ", ", config_.seq_len,
      "]; device cpu (host executable); artifact ", r.key,
      ", ",
      r.cache_hit ? absl::StrFormat("loaded from the compile cache in %.3f s (compiled earlier in %.2f s)", r.seconds,
                                    r.compile_seconds)
                  : absl::StrFormat("compiled in %.2f s", r.seconds),
      "; arena ", absl::StrFormat("%.1f MiB", r.arena_bytes / 1048576.0), ", ", r.launches,
      " launches per micro-step, ", r.kernels, " fusion kernels",
      config_.dp_world_size > 1 ? absl::StrCat("; gradients averaged over ", config_.dp_world_size, " ranks in the step")
                                : std::string(),
      ")");
}

void CompiledStep::ZeroGrads() {
  for (Tensor& g : grads_) std::memset(g.raw_data(), 0, g.bytes());
}

absl::Status CompiledStep::ResetGradients() {
  ZeroGrads();
  return absl::OkStatus();
}

absl::StatusOr<double> CompiledStep::MicroStep(const StepBatch& batch) {
  micro_args_[batch_first_] = batch.inputs;
  micro_args_[batch_first_ + 1] = batch.targets;
  if (config_.packed) {
    micro_args_[batch_first_ + 2] = batch.segment_ids;
    micro_args_[batch_first_ + 3] = batch.positions;
  }
  absl::Status s = executable_->Run(compiler::kMicroStepFunction, micro_args_);
  for (size_t i = batch_first_; i < micro_args_.size(); ++i) micro_args_[i] = Tensor();  // the caller's batch
  if (!s.ok()) {
    ZeroGrads();  // a half-run step may have added into some gradients
    return s;
  }
  // Results: the loss, then each accumulated gradient (in place when the plan donated it).
  for (size_t i = 0; i < grads_.size(); ++i) {
    const void* g = executable_->ResultData(compiler::kMicroStepFunction, static_cast<int>(1 + i));
    if (g != grads_[i].raw_data()) std::memcpy(grads_[i].raw_data(), g, grads_[i].bytes());
  }
  return double(*executable_->ResultData<float>(compiler::kMicroStepFunction, 0));
}

absl::Status CompiledStep::OptimizerStep(double lr_multiplier) {
  *lr_multiplier_.data<float>() = static_cast<float>(lr_multiplier);
  *step_number_.data<float>() = static_cast<float>(steps_taken_ + 1);
  if (absl::Status s = executable_->Run(compiler::kOptimizerStepFunction, optimizer_args_); !s.ok()) {
    return absl::InternalError(absl::StrCat("optimizer step ", steps_taken_ + 1, " failed; the weights and the ",
                                            "optimizer state may be partly updated: ", s.message()));
  }
  // Results: the new parameters, then the new optimizer state (in place when donated).
  const size_t n = grads_.size();
  for (size_t i = 0; i < n + state_.size(); ++i) {
    const void* r = executable_->ResultData(compiler::kOptimizerStepFunction, static_cast<int>(i));
    void* dst = i < n ? params_->params()[i].data() : state_[i - n].raw_data();
    const size_t bytes = i < n ? grads_[i].bytes() : state_[i - n].bytes();
    if (r != dst) std::memcpy(dst, r, bytes);
  }
  ++steps_taken_;
  ZeroGrads();
  return absl::OkStatus();
}

}  // namespace gpt_sft::trainer
