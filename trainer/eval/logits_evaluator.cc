#include "trainer/eval/logits_evaluator.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/builder/step_builder.h"
#include "compiler/builder/step_config.h"
#include "compiler/transforms/pipeline.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

namespace gpt_sft::trainer {

using runtime::DType;
using runtime::Tensor;

struct LogitsEvaluator::Compiled {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<runtime::Interpreter> interpreter;
};

LogitsEvaluator::LogitsEvaluator(const runtime::ParamStore* params)
    : params_(params), compiled_(std::make_unique<Compiled>()) {}

LogitsEvaluator::~LogitsEvaluator() = default;

absl::StatusOr<std::unique_ptr<LogitsEvaluator>> LogitsEvaluator::Create(const runtime::ParamStore* params,
                                                                        runtime::InterpreterOptions options,
                                                                        compiler::ElementType dtype) {
  if (compiler::StoresF64(dtype)) return absl::InvalidArgumentError("LogitsEvaluator runs f32 and bf16, not f64");
  compiler::StepConfig config;
  config.dtype = dtype;
  config.model = params->config();
  config.batch_size = 1;
  config.seq_len = compiler::kDynamicDim;  // one module for prompts of every length
  config.packed = false;
  std::unique_ptr<LogitsEvaluator> evaluator(new LogitsEvaluator(params));
  Compiled& c = *evaluator->compiled_;
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module = compiler::BuildStepModule(c.context, config);
  if (!module.ok()) return module.status();
  c.module = std::move(*module);
  // @logits has no gpt.gradients: the builder's stage is enough to run it.
  if (absl::Status s = compiler::RunToStage(*c.module, compiler::Stage::kGpt); !s.ok()) return s;
  c.interpreter = std::make_unique<runtime::Interpreter>(*c.module, std::move(options));
  return evaluator;
}

int64_t LogitsEvaluator::max_len() const { return 10 * static_cast<int64_t>(model().sequence_len); }

absl::StatusOr<Tensor> LogitsEvaluator::Logits(const std::vector<int32_t>& ids) {
  const int64_t T = static_cast<int64_t>(ids.size());
  if (T < 1 || T > max_len()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a sequence of ", T, " tokens; the forward takes 1 to ", max_len(), " (10 x sequence_len)"));
  }
  const int32_t V = model().vocab_size;
  for (int64_t t = 0; t < T; ++t) {
    if (ids[t] < 0 || ids[t] >= V) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", ids[t], " at position ", t, " is outside the model's vocabulary [0, ", V, ")"));
    }
  }
  std::vector<Tensor> args;
  for (const runtime::Param& p : params_->params()) args.push_back(Tensor::View(DType::kF32, p.shape, p.data()));
  args.push_back(Tensor::FromVector<int32_t>({1, T}, ids));
  absl::StatusOr<std::vector<Tensor>> results =
      compiled_->interpreter->Run(compiler::kLogitsFunction, std::move(args));
  if (!results.ok()) return results.status();
  return (*results)[0].Reshaped({T, V});
}

}  // namespace gpt_sft::trainer
