// BuildStepModule emits, in this order:
//   @logits:         the forward up to the softcapped logits (evaluation, sampling);
//   @loss:           forward + loss (model_forward.cc);
//   @micro_step:     the same forward, then gpt.gradients of loss/grad_accum_steps with
//                    respect to every parameter, added into the gradient arguments;
//   @optimizer_step: one lr per group (initial lr x lr_multiplier, as gpt.mul of rank-0
//                    tensors), then per parameter its gradient averaged over the "dp" group
//                    (gpt.all_reduce avg, when dp_world_size > 1) and gpt.adamw_update or
//                    gpt.muon_update.
#include "compiler/builder/step_builder.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/builder/model_forward.h"
#include "ir/gpt_dialect.h"
#include "ir/gpt_ops.h"
#include "compiler/transforms/autocast_bf16_pass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace gpt_sft::compiler {
namespace {

using ::mlir::Type;
using ::mlir::Value;

inline constexpr char kNameAttr[] = "gpt.name";

class StepEmitter {
 public:
  StepEmitter(mlir::MLIRContext& context, const StepConfig& config)
      : b_(&context), config_(config), layout_(ParamLayout(config.model)) {
    element_ = StoresF64(config.dtype) ? Type(b_.getF64Type()) : Type(b_.getF32Type());
  }

  mlir::OwningOpRef<mlir::ModuleOp> Emit() {
    mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(b_.getUnknownLoc());
    (*module)->setAttr("gpt.model_config", b_.getStringAttr(config_.model.ToJson()));
    // The world the step's collectives expect; the runtimes check their communicator against it.
    if (config_.dp_world_size > 1) (*module)->setAttr("gpt.dp_world_size", b_.getI64IntegerAttr(config_.dp_world_size));
    b_.setInsertionPointToEnd(module->getBody());
    EmitLogitsFunction();
    EmitLossFunction();
    EmitMicroStep();
    EmitOptimizerStep();
    return module;
  }

 private:
  // --- types --------------------------------------------------------------------------------
  Type ParamType(const ParamSpec& p) const { return mlir::RankedTensorType::get(p.shape, element_); }
  Type Scalar() const { return mlir::RankedTensorType::get({}, element_); }
  Type BatchType() {
    const int64_t T = config_.seq_len == kDynamicDim ? mlir::ShapedType::kDynamic : config_.seq_len;
    return mlir::RankedTensorType::get({config_.batch_size, T}, b_.getI32Type());
  }

  // --- functions ----------------------------------------------------------------------------
  /// A func.func named `name` whose arguments and results carry their `gpt.name`; the
  /// builder is left at the start of its body.
  mlir::func::FuncOp BeginFunction(const std::string& name, const std::vector<Type>& arg_types,
                                   const std::vector<Type>& result_types, const EntrySignature& signature) {
    auto type = b_.getFunctionType(arg_types, result_types);
    auto func = b_.create<mlir::func::FuncOp>(mlir::NameLoc::get(b_.getStringAttr(name)), name, type);
    for (size_t i = 0; i < signature.arguments.size(); ++i) {
      func.setArgAttr(i, kNameAttr, b_.getStringAttr(signature.arguments[i]));
    }
    for (size_t i = 0; i < signature.results.size(); ++i) {
      func.setResultAttr(i, kNameAttr, b_.getStringAttr(signature.results[i]));
    }
    saved_ = b_.saveInsertionPoint();
    b_.setInsertionPointToStart(func.addEntryBlock());
    return func;
  }
  void EndFunction(mlir::Location loc, mlir::ValueRange results) {
    b_.create<mlir::func::ReturnOp>(loc, results);
    b_.restoreInsertionPoint(saved_);
  }

  std::vector<Type> ParamTypes() const {
    std::vector<Type> types;
    for (const ParamSpec& p : layout_) types.push_back(ParamType(p));
    return types;
  }
  std::vector<Type> BatchTypes() { return std::vector<Type>(BatchNames(config_.packed).size(), BatchType()); }

  /// Binds the batch arguments starting at `first`.
  ForwardInputs Inputs(mlir::func::FuncOp func, unsigned first) const {
    ForwardInputs in;
    for (size_t i = 0; i < layout_.size(); ++i) in.params.push_back(func.getArgument(i));
    in.inputs = func.getArgument(first);
    in.targets = func.getArgument(first + 1);
    if (config_.packed) {
      in.segment_ids = func.getArgument(first + 2);
      in.positions = func.getArgument(first + 3);
    }
    return in;
  }

  void EmitLogitsFunction() {
    std::vector<Type> args = ParamTypes();
    const size_t num_batch = BatchNames(config_.packed).size() - 1;  // no targets
    for (size_t i = 0; i < num_batch; ++i) args.push_back(BatchType());
    const int64_t T = config_.seq_len == kDynamicDim ? mlir::ShapedType::kDynamic : config_.seq_len;
    Type logits = mlir::RankedTensorType::get({config_.batch_size, T, config_.model.vocab_size}, element_);
    mlir::func::FuncOp func = BeginFunction(kLogitsFunction, args, {logits}, LogitsSignature(config_));
    ForwardInputs in;
    const size_t n = layout_.size();
    for (size_t i = 0; i < n; ++i) in.params.push_back(func.getArgument(i));
    in.inputs = func.getArgument(n);
    if (config_.packed) {
      in.segment_ids = func.getArgument(n + 1);
      in.positions = func.getArgument(n + 2);
    }
    EndFunction(func.getLoc(), {EmitLogits(b_, func.getLoc(), config_, in)});
  }

  void EmitLossFunction() {
    std::vector<Type> args = ParamTypes();
    for (Type t : BatchTypes()) args.push_back(t);
    mlir::func::FuncOp func = BeginFunction(kLossFunction, args, {Scalar()}, LossSignature(config_));
    Value loss = EmitLoss(b_, func.getLoc(), config_, Inputs(func, layout_.size()));
    EndFunction(func.getLoc(), {loss});
  }

  void EmitMicroStep() {
    std::vector<Type> args = ParamTypes(), grads = ParamTypes();
    args.insert(args.end(), grads.begin(), grads.end());
    for (Type t : BatchTypes()) args.push_back(t);
    std::vector<Type> results = {Scalar()};
    results.insert(results.end(), grads.begin(), grads.end());
    mlir::func::FuncOp func = BeginFunction(kMicroStepFunction, args, results, MicroStepSignature(config_));
    const size_t n = layout_.size();
    ForwardInputs in = Inputs(func, 2 * n);
    Value loss = EmitLoss(b_, func.getLoc(), config_, in);
    mlir::Location loc = mlir::NameLoc::get(b_.getStringAttr("backward"), func.getLoc());
    Value seed = Constant(loc, 1.0 / config_.grad_accum_steps);
    auto gradients = b_.create<gpt::GradientsOp>(loc, loss, seed, in.params);
    std::vector<Value> returned = {loss};
    for (size_t i = 0; i < n; ++i) {
      returned.push_back(b_.create<gpt::AddOp>(loc, func.getArgument(n + i), gradients.getResult(i)));
    }
    EndFunction(loc, returned);
  }

  void EmitOptimizerStep() {
    std::vector<Type> args = ParamTypes(), grads = ParamTypes(), state;
    args.insert(args.end(), grads.begin(), grads.end());
    for (const ParamSpec& p : layout_) {
      for (size_t s = 0; s < OptimizerStateNames(p).size(); ++s) state.push_back(ParamType(p));
    }
    args.insert(args.end(), state.begin(), state.end());
    args.push_back(Scalar());  // lr_multiplier
    args.push_back(Scalar());  // step
    std::vector<Type> results = ParamTypes();
    results.insert(results.end(), state.begin(), state.end());
    mlir::func::FuncOp func =
        BeginFunction(kOptimizerStepFunction, args, results, OptimizerStepSignature(config_));
    const size_t n = layout_.size();
    Value lrm = func.getArgument(args.size() - 2), step = func.getArgument(args.size() - 1);
    const OptimizerConfig& opt = config_.optimizer;
    std::vector<Value> new_params, new_state;
    unsigned state_arg = 2 * n;
    for (size_t i = 0; i < n; ++i) {
      const ParamSpec& p = layout_[i];
      mlir::Location loc = mlir::NameLoc::get(b_.getStringAttr(p.name), func.getLoc());
      Value lr = GroupLr(p.group, lrm, loc);
      Value param = func.getArgument(i), grad = AverageOverRanks(func.getArgument(n + i), loc);
      if (UsesAdamW(p.group)) {
        auto update = b_.create<gpt::AdamwUpdateOp>(
            loc, param, grad, func.getArgument(state_arg), func.getArgument(state_arg + 1), lr, step,
            F64(opt.adam_beta1), F64(opt.adam_beta2), F64(opt.adam_eps), F64(opt.weight_decay));
        state_arg += 2;
        new_params.push_back(update.getNewParam());
        new_state.push_back(update.getNewExpAvg());
        new_state.push_back(update.getNewExpAvgSq());
      } else {
        auto update = b_.create<gpt::MuonUpdateOp>(loc, param, grad, func.getArgument(state_arg), lr,
                                                   F64(opt.muon_momentum), b_.getBoolAttr(opt.muon_nesterov),
                                                   b_.getI64IntegerAttr(opt.muon_ns_steps));
        state_arg += 1;
        new_params.push_back(update.getNewParam());
        new_state.push_back(update.getNewMomentumBuffer());
      }
    }
    new_params.insert(new_params.end(), new_state.begin(), new_state.end());
    EndFunction(func.getLoc(), new_params);
  }

  /// The gradient averaged over the data-parallel group; itself on one rank, so a
  /// single-rank step has no collective at all.
  Value AverageOverRanks(Value grad, mlir::Location loc) {
    if (config_.dp_world_size == 1) return grad;
    return b_.create<gpt::AllReduceOp>(loc, grad, gpt::ReductionKind::Avg, b_.getStringAttr("dp"));
  }

  /// initial_lr(group) x lr_multiplier, emitted once per group.
  Value GroupLr(ParamGroup group, Value lrm, mlir::Location loc) {
    Value& lr = group_lr_[static_cast<int>(group)];
    if (!lr) {
      mlir::Location group_loc = mlir::NameLoc::get(b_.getStringAttr(GroupName(group)), loc);
      lr = b_.create<gpt::MulOp>(group_loc, Constant(group_loc, config_.optimizer.InitialLr(group, config_.model.n_embd)),
                                 lrm);
    }
    return lr;
  }
  static const char* GroupName(ParamGroup group) {
    switch (group) {
      case ParamGroup::kEmbedding:
        return "lr.embedding";
      case ParamGroup::kUnembedding:
        return "lr.unembedding";
      case ParamGroup::kMatrix:
        return "lr.matrix";
    }
    return "lr";
  }

  Value Constant(mlir::Location loc, double value) {
    auto type = llvm::cast<mlir::RankedTensorType>(Scalar());
    auto attr = mlir::DenseElementsAttr::get(type, b_.getFloatAttr(element_, value));
    return b_.create<mlir::arith::ConstantOp>(loc, attr);
  }
  mlir::FloatAttr F64(double value) { return b_.getF64FloatAttr(value); }

  mlir::OpBuilder b_;
  const StepConfig& config_;
  std::vector<ParamSpec> layout_;
  Type element_;
  mlir::OpBuilder::InsertPoint saved_;
  Value group_lr_[3];
};

}  // namespace

void LoadStepDialects(mlir::MLIRContext& context) {
  context.loadDialect<gpt::GptDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect>();
}

absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> BuildStepModule(mlir::MLIRContext& context,
                                                                 const StepConfig& config) {
  if (absl::Status s = config.Validate(); !s.ok()) return s;
  LoadStepDialects(context);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic& d) {
    absl::StrAppend(&diagnostics, d.str(), "\n");
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = StepEmitter(context, config).Emit();
  if (mlir::failed(mlir::verify(*module))) {
    return absl::InternalError(absl::StrCat("the built step does not verify (a builder bug): ", diagnostics));
  }
  if (absl::Status s = ApplyDtype(*module, config.dtype); !s.ok()) return s;
  return module;
}

absl::Status ApplyDtype(mlir::ModuleOp module, ElementType dtype) {
  if (dtype != ElementType::kBF16) return absl::OkStatus();
  mlir::PassManager pm(module.getContext());
  pm.addPass(CreateAutocastBf16Pass());
  if (mlir::failed(pm.run(module))) return absl::InternalError("gpt-autocast-bf16 failed on the built step");
  return absl::OkStatus();
}

}  // namespace gpt_sft::compiler
