#include "trainer/eager_step.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/builder/step_builder.h"
#include "compiler/transforms/pipeline.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

namespace gpt_sft::trainer {

using runtime::DType;
using runtime::Tensor;

struct EagerStep::Compiled {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<runtime::Interpreter> interpreter;
};

EagerStep::EagerStep(const compiler::StepConfig& config, runtime::ParamStore* params)
    : config_(config), params_(params), compiled_(std::make_unique<Compiled>()) {}

EagerStep::~EagerStep() = default;

absl::StatusOr<std::unique_ptr<EagerStep>> EagerStep::Create(const compiler::StepConfig& config,
                                                            runtime::ParamStore* params,
                                                            runtime::InterpreterOptions options) {
  if (compiler::StoresF64(config.dtype)) {
    return absl::InvalidArgumentError(
        "EagerStep runs float32 and bfloat16 steps (f32 storage, the ParamStore's type); dtype is f64");
  }
  if (!(params->config() == config.model)) {
    return absl::InvalidArgumentError(absl::StrCat("the ParamStore's model config ", params->config().ToJson(),
                                                   " differs from the step's ", config.model.ToJson()));
  }
  const int world = options.collectives ? options.collectives->GroupSize("dp") : 1;
  if (world != config.dp_world_size) {
    return absl::InvalidArgumentError(absl::StrCat("the step is built for dp_world_size ", config.dp_world_size,
                                                   " but the interpreter's collectives have ", world,
                                                   " rank(s) in group \"dp\""));
  }
  std::unique_ptr<EagerStep> step(new EagerStep(config, params));
  Compiled& c = *step->compiled_;
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module = compiler::BuildStepModule(c.context, config);
  if (!module.ok()) return module.status();
  c.module = std::move(*module);
  if (absl::Status s = compiler::RunToStage(*c.module, compiler::Stage::kAutodiff); !s.ok()) return s;
  c.interpreter = std::make_unique<runtime::Interpreter>(*c.module, std::move(options));
  if (absl::Status s = step->ZeroGrads(); !s.ok()) return s;
  for (const runtime::Param& p : params->params()) {
    const size_t count = compiler::OptimizerStateNames({p.name, p.shape, p.group}).size();
    for (size_t k = 0; k < count; ++k) {
      step->state_.push_back(Tensor::Zeros(DType::kF32, p.shape, &step->allocator()));
      if (!step->state_.back().defined()) return absl::ResourceExhaustedError("no memory for optimizer state of " + p.name);
    }
  }
  return step;
}

runtime::AllocatorStats EagerStep::allocator_stats() const { return compiled_->interpreter->allocator_stats(); }
runtime::CachingAllocator& EagerStep::allocator() { return compiled_->interpreter->allocator(); }

std::vector<runtime::OpProfileEntry> EagerStep::profile() const { return compiled_->interpreter->profile(); }
void EagerStep::ResetProfile() { compiled_->interpreter->ResetProfile(); }

std::vector<Tensor> EagerStep::ParamViews() const {
  std::vector<Tensor> views;
  for (const runtime::Param& p : params_->params()) views.push_back(Tensor::View(DType::kF32, p.shape, p.data()));
  return views;
}

std::vector<Tensor> EagerStep::BatchArgs(const StepBatch& batch) const {
  std::vector<Tensor> args = {batch.inputs, batch.targets};
  if (config_.packed) {
    args.push_back(batch.segment_ids);
    args.push_back(batch.positions);
  }
  return args;
}

absl::Status EagerStep::ZeroGrads() {
  grads_.clear();
  for (const runtime::Param& p : params_->params()) {
    grads_.push_back(Tensor::Zeros(DType::kF32, p.shape, &allocator()));
    if (!grads_.back().defined()) return absl::ResourceExhaustedError("no memory for the gradient of " + p.name);
  }
  return absl::OkStatus();
}

absl::StatusOr<double> EagerStep::MicroStep(const StepBatch& batch) {
  const size_t n = grads_.size();
  std::vector<Tensor> args = ParamViews();
  runtime::RunOptions run;
  for (size_t i = 0; i < n; ++i) {
    run.donated_args.push_back(static_cast<int>(n + i));
    args.push_back(std::move(grads_[i]));
  }
  for (Tensor& t : BatchArgs(batch)) args.push_back(std::move(t));
  absl::StatusOr<std::vector<Tensor>> results =
      compiled_->interpreter->Run(compiler::kMicroStepFunction, std::move(args), run);
  if (!results.ok()) {
    // The donated gradient buffers may be gone: start the accumulation over rather than
    // leave half-updated sums behind.
    if (absl::Status s = ZeroGrads(); !s.ok()) return s;
    return results.status();
  }
  for (size_t i = 0; i < n; ++i) grads_[i] = std::move((*results)[1 + i]);
  return (*results)[0].ScalarAsDouble();
}

absl::StatusOr<std::optional<NonFiniteValue>> EagerStep::FirstNonFiniteGradient() {
  const std::vector<runtime::Param>& params = params_->params();
  for (size_t i = 0; i < grads_.size(); ++i) {
    const Tensor& g = grads_[i];
    if (auto found = FindNonFinite(params[i].name, static_cast<const float*>(g.raw_data()), g.numel())) return found;
  }
  return std::nullopt;
}

absl::StatusOr<double> EagerStep::Loss(const StepBatch& batch) {
  std::vector<Tensor> args = ParamViews();
  for (Tensor& t : BatchArgs(batch)) args.push_back(std::move(t));
  absl::StatusOr<std::vector<Tensor>> results = compiled_->interpreter->Run(compiler::kLossFunction, std::move(args));
  if (!results.ok()) return results.status();
  return (*results)[0].ScalarAsDouble();
}

absl::Status EagerStep::OptimizerStep(double lr_multiplier) {
  const size_t n = grads_.size();
  std::vector<Tensor> args = ParamViews();
  runtime::RunOptions run;
  for (size_t i = 0; i < n; ++i) run.donated_args.push_back(static_cast<int>(i));
  for (size_t i = 0; i < n; ++i) {
    run.donated_args.push_back(static_cast<int>(n + i));
    args.push_back(std::move(grads_[i]));
  }
  for (size_t i = 0; i < state_.size(); ++i) {
    run.donated_args.push_back(static_cast<int>(2 * n + i));
    args.push_back(std::move(state_[i]));
  }
  args.push_back(Tensor::Scalar<float>(static_cast<float>(lr_multiplier)));
  args.push_back(Tensor::Scalar<float>(static_cast<float>(steps_taken_ + 1)));
  absl::StatusOr<std::vector<Tensor>> results =
      compiled_->interpreter->Run(compiler::kOptimizerStepFunction, std::move(args), run);
  if (!results.ok()) {
    return absl::InternalError(absl::StrCat("optimizer step ", steps_taken_ + 1, " failed; the weights and the ",
                                            "optimizer state may be partly updated: ", results.status().message()));
  }
  for (size_t i = 0; i < n; ++i) {
    runtime::Param& p = params_->params()[i];
    const Tensor& updated = (*results)[i];
    if (updated.raw_data() != p.data()) std::memcpy(p.data(), updated.raw_data(), updated.bytes());
  }
  state_.assign(std::make_move_iterator(results->begin() + n), std::make_move_iterator(results->end()));
  ++steps_taken_;
  return ZeroGrads();
}

absl::StatusOr<OptimizerState> EagerStep::ExportOptimizerState() {
  OptimizerState out;
  out.steps_taken = steps_taken_;
  const auto layout = OptimizerStateLayout(*params_);
  for (size_t i = 0; i < state_.size(); ++i) {
    Tensor copy = Tensor::Empty(DType::kF32, state_[i].shape());
    std::memcpy(copy.raw_data(), state_[i].raw_data(), copy.bytes());
    out.tensors.emplace_back(layout[i].first, std::move(copy));
  }
  return out;
}

absl::Status EagerStep::ImportOptimizerState(const OptimizerState& state) {
  if (absl::Status s = CheckOptimizerStateLayout(*params_, state); !s.ok()) return s;
  for (size_t i = 0; i < state_.size(); ++i) {
    std::memcpy(state_[i].raw_data(), state.tensors[i].second.raw_data(), state_[i].bytes());
  }
  steps_taken_ = state.steps_taken;
  return ZeroGrads();
}

}  // namespace gpt_sft::trainer
