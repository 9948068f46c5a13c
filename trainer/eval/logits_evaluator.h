// LogitsEvaluator: the model's forward to the softcapped logits for one token sequence of
// any length, on the interpreted path. It builds the step's @logits entry point for batch 1
// and a dynamic sequence length (StepConfig::seq_len = kDynamicDim), without autodiff, and
// runs it over views of a ParamStore's weights, read afresh at every call (so the weights a
// training loop updates in place are the ones evaluated). Categorical multiple choice uses
// it; so can sampling.
//
//   auto eval = LogitsEvaluator::Create(&params);
//   auto logits = (*eval)->Logits(prompt_ids);   // [T, V] f32
#ifndef GPT_SFT_TRAINER_EVAL_LOGITS_EVALUATOR_H_
#define GPT_SFT_TRAINER_EVAL_LOGITS_EVALUATOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/builder/step_config.h"
#include "model/model_config.h"
#include "runtime/base/tensor.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::trainer {

class LogitsEvaluator {
 public:
  /// `params` is borrowed and must outlive the evaluator. `dtype`: f32, or bf16 for nanochat's
  /// autocast numerics (the logits are then bf16 values). Errors: the builder's (naming the
  /// model config field at fault).
  static absl::StatusOr<std::unique_ptr<LogitsEvaluator>> Create(
      const runtime::ParamStore* params, runtime::InterpreterOptions options = {},
      compiler::ElementType dtype = compiler::ElementType::kF32);
  ~LogitsEvaluator();
  LogitsEvaluator(const LogitsEvaluator&) = delete;
  LogitsEvaluator& operator=(const LogitsEvaluator&) = delete;

  /// The softcapped logits of `ids` (1 <= T <= max_len(), each id in [0, vocab_size)) as a
  /// [T, V] f32 tensor: row t scores the token after ids[0..t]. Errors name the position
  /// and id at fault, or the length.
  absl::StatusOr<runtime::Tensor> Logits(const std::vector<int32_t>& ids);

  /// The longest sequence the forward takes: the rotary cache, 10 x model.sequence_len.
  int64_t max_len() const;
  const compiler::ModelConfig& model() const { return params_->config(); }

 private:
  struct Compiled;  // the MLIR context, module and interpreter
  explicit LogitsEvaluator(const runtime::ParamStore* params);

  const runtime::ParamStore* params_;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_EVAL_LOGITS_EVALUATOR_H_
