// StepConfig: everything the builder needs to emit one training step (the model, the static
// batch shape, packing, accumulation, the element type and nanochat's optimizer settings),
// and the names of the entry points' arguments. MLIR-free, so the trainer and the runtime can
// bind tensors to arguments by name without parsing IR.
#ifndef GPT_SFT_COMPILER_BUILDER_STEP_CONFIG_H_
#define GPT_SFT_COMPILER_BUILDER_STEP_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/model_config.h"
#include "model/param_layout.h"

namespace gpt_sft::compiler {

/// A dimension left to run time (`?` in the IR): the interpreter's evaluation path.
inline constexpr int64_t kDynamicDim = -1;

/// The step's numerics. kBF16 is nanochat's bf16 autocast (NANOCHAT.md 1.2) on f32 storage:
/// tensors are f32, and the builder rounds them to bf16 values where autocast would leave a
/// bf16 tensor (gpt.round_bf16, inserted by gpt-autocast-bf16); master weights, gradients
/// and optimizer state stay f32. Storing bf16 itself (half the activation bytes) is not done yet.
enum class ElementType { kF32, kF64, kBF16 };

/// "f32", "f64", "bf16": the step config's JSON spelling.
const char* DtypeName(ElementType dtype);
/// A dtype from its JSON spelling or the trainer's ("float32", "float64", "bfloat16"); the
/// error lists the accepted names (callers prefix the flag).
absl::StatusOr<ElementType> ParseDtype(const std::string& name);
/// The element type the step's tensors are stored in: f64 for kF64, else f32.
inline bool StoresF64(ElementType dtype) { return dtype == ElementType::kF64; }

/// nanochat's SFT optimizer settings (NANOCHAT.md 4.1-4.4).
struct OptimizerConfig {
  double unembedding_lr = 0.004;
  double embedding_lr = 0.2;
  double matrix_lr = 0.02;
  double init_lr_frac = 0.02;  // chat_sft multiplies every group's lr by it
  double weight_decay = 0.0;
  double adam_beta1 = 0.8, adam_beta2 = 0.95, adam_eps = 1e-10;
  double muon_momentum = 0.95;
  bool muon_nesterov = true;
  int muon_ns_steps = 5;

  /// The lr a group starts at (before the schedule's multiplier): base · init_lr_frac, and
  /// for the AdamW groups also · (n_embd / 768)^-0.5.
  double InitialLr(ParamGroup group, int n_embd) const;
};

struct StepConfig {
  ModelConfig model;
  int64_t batch_size = 4;   // B: static always
  int64_t seq_len = 2048;   // T: static, or kDynamicDim for evaluation at any length
  bool packed = false;      // inputs carry segment_ids and positions [B, T] (best-fit packing)
  int grad_accum_steps = 1; // micro_step's loss is divided by it before backward (per rank)
  /// Ranks of the data-parallel group "dp". Above 1, optimizer_step averages every gradient
  /// over the group (gpt.all_reduce avg) before its update; every rank then runs the same
  /// full update, so the ranks' parameters stay bit-identical (no sharded optimizer state).
  int dp_world_size = 1;
  ElementType dtype = ElementType::kF32;
  OptimizerConfig optimizer;

  /// Errors name the field at fault.
  absl::Status Validate() const;

  /// Every field as one JSON object (an artifact carries the config it was compiled from).
  std::string ToJson() const;
  /// The inverse; errors name the key at fault. The result is Validate()d.
  static absl::StatusOr<StepConfig> FromJson(const std::string& json);
};

/// The entry points the builder emits, by function name:
///   logits(params..., inputs[, segment_ids, positions]) -> logits [B, T, V] (softcapped)
///   loss(params..., batch...) -> loss
///   micro_step(params..., grads..., batch...) -> (loss, grads...)      grads += d(loss/accum)
///   optimizer_step(params..., grads..., state..., lr_multiplier, step) -> (params..., state...)
/// batch = inputs, targets [B, T] i32, then segment_ids, positions when packed.
inline constexpr char kLogitsFunction[] = "logits";
inline constexpr char kLossFunction[] = "loss";
inline constexpr char kMicroStepFunction[] = "micro_step";
inline constexpr char kOptimizerStepFunction[] = "optimizer_step";

/// Argument and result names (the `gpt.name` attribute of each): parameters by their
/// state_dict name, "grad/<param>", "adamw.exp_avg/<param>", "adamw.exp_avg_sq/<param>",
/// "muon.momentum_buffer/<param>", "inputs", "targets", "segment_ids", "positions",
/// "loss", "lr_multiplier", "step".
std::string GradName(const std::string& param);
/// The optimizer state of one parameter, in argument order: AdamW's two moments, or Muon's
/// momentum buffer.
std::vector<std::string> OptimizerStateNames(const ParamSpec& param);
std::vector<std::string> BatchNames(bool packed);

struct EntrySignature {
  std::vector<std::string> arguments;
  std::vector<std::string> results;
};
/// What each entry point takes and returns, in order, for `config`.
EntrySignature LogitsSignature(const StepConfig& config);
EntrySignature LossSignature(const StepConfig& config);
EntrySignature MicroStepSignature(const StepConfig& config);
EntrySignature OptimizerStepSignature(const StepConfig& config);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_BUILDER_STEP_CONFIG_H_
