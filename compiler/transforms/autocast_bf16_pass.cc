//===- autocast_bf16_pass.cc - gpt-autocast-bf16 --------------------------===//
//
// Under torch.autocast(bfloat16) with a bf16 embedding table (NANOCHAT.md 1.2), nanochat's
// forward keeps every activation in bf16: matmul and attention take bf16 inputs (fp32
// weights are cast) and return bf16 (fp32 accumulation inside); elementwise ops compute in
// their input dtype and round after each op; rms_norm computes in fp32 and rounds once; the
// logits are upcast to fp32 for the cross-entropy. On f32 tensors that is:
// 1. the activations are the values computed from a gpt.embedding result, up to (not
//    through) gpt.cross_entropy: the loss and everything after it (gpt.gradients, the
//    gradient accumulation) stay f32, and so does what does not read the tokens at all
//    (the optimizer step's learning rates);
// 2. walking the function in order, each activation-producing op of the rounded kinds
//    (embedding, matmul, rms_norm, attention, cached_attention, relu_square, softcap, add,
//    mul) gets a gpt.round_bf16 on its result, which replaces every other use; gpt.rotary and
//    gpt.softcap get their round_bf16 attribute instead (nanochat's rotary rounds cos, sin,
//    each product and each sum; its softcap rounds after the division, the tanh and the
//    multiply: one rounding at the output cannot say either);
// 3. a matmul's or attention's float operand that is not bf16-valued already (a round_bf16,
//    or a reshape/transpose/concat of bf16-valued values) is rounded where it is read: the
//    f32 master weights, cast to bf16 on their way into the GEMM. One weight used by several
//    ops is rounded once.
// An op whose result already feeds a round_bf16 alone is left as it is, and the attributes
// are set once, so running the pass twice changes nothing.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/autocast_bf16_pass.h"

#include "ir/gpt_dialect.h"
#include "ir/gpt_ops.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace gpt_sft::compiler {
namespace {

using ::mlir::Operation;
using ::mlir::Value;

/// Ops whose result autocast leaves in bf16.
bool RoundsItsResult(Operation* op) {
  return llvm::isa<gpt::EmbeddingOp, gpt::MatmulOp, gpt::RmsNormOp, gpt::AttentionOp, gpt::CachedAttentionOp,
                   gpt::ReluSquareOp, gpt::AddOp, gpt::MulOp>(op);
}

/// Ops whose float inputs autocast casts to bf16 (matmul's weight, attention's q, k, v).
bool RoundsItsInputs(Operation* op) {
  return llvm::isa<gpt::MatmulOp, gpt::AttentionOp, gpt::CachedAttentionOp>(op);
}

bool IsF32Tensor(Value v) {
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
  return type && type.getElementType().isF32();
}

/// True when every element of `v` is a bf16 value by construction.
bool IsBf16Valued(Value v) {
  Operation* def = v.getDefiningOp();
  if (!def) return false;
  if (llvm::isa<gpt::RoundBf16Op>(def)) return true;
  if (auto rotary = llvm::dyn_cast<gpt::RotaryOp>(def)) return rotary.getRoundBf16();
  if (auto softcap = llvm::dyn_cast<gpt::SoftcapOp>(def)) return softcap.getRoundBf16();
  if (!llvm::isa<gpt::ReshapeOp, gpt::TransposeOp, gpt::ConcatOp>(def)) return false;
  return llvm::all_of(def->getOperands(), IsBf16Valued);
}

/// Step 1: the values computed from the token embeddings, stopping at the loss.
llvm::DenseSet<Operation*> ActivationOps(mlir::func::FuncOp func) {
  llvm::DenseSet<Operation*> ops;
  llvm::SmallVector<Operation*> worklist;
  func.walk([&](gpt::EmbeddingOp op) { worklist.push_back(op); });
  while (!worklist.empty()) {
    Operation* op = worklist.pop_back_val();
    if (llvm::isa<gpt::CrossEntropyOp>(op) || !ops.insert(op).second) continue;
    for (Operation* user : op->getUsers()) worklist.push_back(user);
  }
  return ops;
}

class AutocastBf16Pass : public mlir::PassWrapper<AutocastBf16Pass, mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AutocastBf16Pass)

  llvm::StringRef getArgument() const final { return "gpt-autocast-bf16"; }
  llvm::StringRef getDescription() const final {
    return "Insert gpt.round_bf16 where nanochat's bf16 autocast rounds (forward, before gpt-autodiff)";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override { registry.insert<gpt::GptDialect>(); }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    module->setAttr(kAutocastAttr, mlir::StringAttr::get(module.getContext(), "bf16"));
    for (auto func : module.getOps<mlir::func::FuncOp>()) {
      if (!func.isDeclaration()) Autocast(func);
    }
  }

 private:
  void Autocast(mlir::func::FuncOp func) {
    const llvm::DenseSet<Operation*> activations = ActivationOps(func);
    llvm::DenseMap<Value, Value> rounded_inputs;  // step 3: one rounding per value
    llvm::SmallVector<Operation*> ops;
    func.walk([&](Operation* op) {
      if (activations.contains(op)) ops.push_back(op);
    });
    for (Operation* op : ops) {
      if (RoundsItsInputs(op)) RoundInputs(op, rounded_inputs);
      if (RoundsItsResult(op)) RoundResult(op);
      if (auto rotary = llvm::dyn_cast<gpt::RotaryOp>(op); rotary && IsF32Tensor(rotary.getX())) {
        rotary.setRoundBf16(true);
      }
      if (auto softcap = llvm::dyn_cast<gpt::SoftcapOp>(op); softcap && IsF32Tensor(softcap.getX())) {
        softcap.setRoundBf16(true);
      }
    }
  }

  /// Step 3.
  static void RoundInputs(Operation* op, llvm::DenseMap<Value, Value>& rounded_inputs) {
    for (mlir::OpOperand& operand : op->getOpOperands()) {
      Value v = operand.get();
      if (!IsF32Tensor(v) || IsBf16Valued(v)) continue;
      Value& rounded = rounded_inputs[v];
      if (!rounded) {
        mlir::OpBuilder b(op->getContext());
        if (Operation* def = v.getDefiningOp()) {
          b.setInsertionPointAfter(def);
        } else {
          b.setInsertionPointToStart(llvm::cast<mlir::BlockArgument>(v).getOwner());
        }
        rounded = b.create<gpt::RoundBf16Op>(v.getLoc(), v);
      }
      operand.set(rounded);
    }
  }

  /// Step 2.
  static void RoundResult(Operation* op) {
    Value result = op->getResult(0);
    if (!IsF32Tensor(result) || result.use_empty()) return;
    if (result.hasOneUse() && llvm::isa<gpt::RoundBf16Op>(*result.getUsers().begin())) return;
    mlir::OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    auto round = b.create<gpt::RoundBf16Op>(op->getLoc(), result);
    result.replaceAllUsesExcept(round.getResult(), round);
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateAutocastBf16Pass() { return std::make_unique<AutocastBf16Pass>(); }

void RegisterAutocastBf16Pass() { mlir::PassRegistration<AutocastBf16Pass>(); }

}  // namespace gpt_sft::compiler
