//===- fuse_pass.cc - gpt-fuse --------------------------------------------===//
//
// Groups elementwise ops into gpt.fusion regions, one block at a time.
// "Adjacent" is in the dataflow: an op and the fusible op that produces one of
// its operands (the builder interleaves forward and backward ops, so chains
// are rarely next to each other in the text). Walking the block last op first:
// 1. a fusible op whose operands and result share one type, not yet grouped,
//    is the root (last op) of a new group;
// 2. a producer of a group member joins when it is fusible, has that type and
//    every one of its users is in the group; a value with an outside use thus
//    ends the group (its op becomes the root of another one);
// 3. each group of two or more ops becomes a gpt.fusion at the root's place,
//    whose inputs are the values the group reads from outside (first use
//    first) and whose yield is the root's result. A group of one op stays,
//    unless that op runs only inside fusions (gpt.round_bf16, a bf16 gpt.softcap).
// The ops are cloned unchanged into the region, so it computes what they did.
// With bf16-softcap-builtins (a target with kernels for them: the cpu driver's), a bf16
// gpt.softcap, a gpt.softcap_grad under bf16 autocast and a gpt.round_bf16 that only one of
// those reads stay out of every group: the target's lowering fuses them with the
// cross-entropy around them instead.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/fuse_pass.h"

#include "ir/autocast.h"
#include "ir/gpt_dialect.h"
#include "ir/gpt_ops.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace gpt_sft::compiler {
namespace {

using ::mlir::Operation;
using ::mlir::Type;
using ::mlir::Value;

/// The bf16 softcap's ops a target with bf16 softcap builtins lowers itself: a bf16
/// softcap, a softcap_grad under autocast, and a round_bf16 whose one reader is either.
bool IsBf16SoftcapOp(Operation *op) {
  if (auto softcap = llvm::dyn_cast<gpt::SoftcapOp>(op)) return softcap.getRoundBf16();
  if (llvm::isa<gpt::SoftcapGradOp>(op)) return UnderBf16Autocast(op);
  if (llvm::isa<gpt::RoundBf16Op>(op) && op->getResult(0).hasOneUse()) {
    Operation *user = *op->getResult(0).getUsers().begin();
    return llvm::isa<gpt::SoftcapOp, gpt::SoftcapGradOp>(user) && IsBf16SoftcapOp(user);
  }
  return false;
}

/// The elementwise ops a fusion may hold.
bool IsFusibleKind(Operation *op, bool bf16_softcap_builtins) {
  if (bf16_softcap_builtins && IsBf16SoftcapOp(op)) return false;
  return llvm::isa<gpt::AddOp, gpt::MulOp, gpt::ReluSquareOp, gpt::ReluSquareGradOp,
                   gpt::SoftcapOp, gpt::SoftcapGradOp, gpt::RoundBf16Op>(op);
}

/// Ops the targets run only as fusion code (no kernel of their own), so even alone they
/// become a fusion: rounding is a few integer instructions, not worth a builtin per target
/// (gpt.round_bf16, and gpt.softcap's bf16 variant). The cpu target's exceptions around the
/// bf16 softcap never reach here (bf16-softcap-builtins keeps them out of every group).
bool RunsOnlyFused(Operation *op) {
  if (auto softcap = llvm::dyn_cast<gpt::SoftcapOp>(op)) return softcap.getRoundBf16();
  return llvm::isa<gpt::RoundBf16Op>(op);
}

/// The one type of `op`'s operands and result, or null when they differ.
Type UniformType(Operation *op) {
  if (op->getNumResults() != 1) return nullptr;
  Type type = op->getResult(0).getType();
  for (Value operand : op->getOperands()) {
    if (operand.getType() != type) return nullptr;
  }
  return type;
}

/// The fusible producer of `value` in `block` with the type `type`, or null.
Operation *FusibleProducer(Value value, mlir::Block *block, Type type, bool bf16_softcap_builtins) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != block || !IsFusibleKind(def, bf16_softcap_builtins) || UniformType(def) != type) {
    return nullptr;
  }
  return def;
}

/// The group that ends in `root`: `root` and, transitively, every fusible producer of the
/// same type all of whose users are already in the group (so only root's result leaves
/// it), skipping ops in `taken`; in block order.
llvm::SmallVector<Operation *> GroupEndingAt(Operation *root,
                                             const llvm::DenseSet<Operation *> &taken,
                                             bool bf16_softcap_builtins) {
  Type type = UniformType(root);
  mlir::Block *block = root->getBlock();
  llvm::SetVector<Operation *> group;
  group.insert(root);
  llvm::SmallVector<Operation *> worklist = {root};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands()) {
      Operation *producer = FusibleProducer(operand, block, type, bf16_softcap_builtins);
      if (!producer || taken.contains(producer) || group.contains(producer)) continue;
      // A producer with a user outside the group ends it there; it is re-examined when
      // another of its users joins.
      bool all_users_inside = llvm::all_of(producer->getUsers(),
                                           [&](Operation *user) { return group.contains(user); });
      if (!all_users_inside) continue;
      group.insert(producer);
      worklist.push_back(producer);
    }
  }
  llvm::SmallVector<Operation *> ops(group.begin(), group.end());
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ops;
}

/// The maximal groups of `block`, each with two or more ops (or one that runs only fused)
/// and ending in its own root:
/// roots are taken last op first, so a group's root is the use of its chain farthest down.
llvm::SmallVector<llvm::SmallVector<Operation *>> Groups(mlir::Block &block, bool bf16_softcap_builtins) {
  llvm::SmallVector<llvm::SmallVector<Operation *>> groups;
  llvm::DenseSet<Operation *> taken;
  for (Operation &op : llvm::reverse(block)) {
    if (taken.contains(&op) || !IsFusibleKind(&op, bf16_softcap_builtins) || !UniformType(&op)) continue;
    llvm::SmallVector<Operation *> group = GroupEndingAt(&op, taken, bf16_softcap_builtins);
    taken.insert(group.begin(), group.end());
    if (group.size() > 1 || RunsOnlyFused(group.front())) groups.push_back(std::move(group));
  }
  return groups;
}

/// Moves `group` into a new gpt.fusion in its place.
void Fuse(llvm::ArrayRef<Operation *> group) {
  llvm::DenseSet<Operation *> members(group.begin(), group.end());
  llvm::SetVector<Value> inputs;
  for (Operation *op : group) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !members.contains(def)) inputs.insert(operand);
    }
  }
  // Every other op of the group feeds `last`, and all the group reads from outside is
  // defined above each reader, so the fusion can stand where `last` stands.
  Operation *last = group.back();
  mlir::OpBuilder builder(last);
  auto fusion = builder.create<gpt::FusionOp>(last->getLoc(), last->getResultTypes(),
                                              inputs.getArrayRef());
  mlir::Block *body = builder.createBlock(&fusion.getBody());
  mlir::IRMapping mapping;
  for (Value input : inputs) mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (Operation *op : group) builder.clone(*op, mapping);
  builder.create<gpt::YieldOp>(last->getLoc(), mapping.lookup(last->getResult(0)));
  last->getResult(0).replaceAllUsesWith(fusion.getResult(0));
  for (Operation *op : llvm::reverse(group)) op->erase();
}

class FusePass : public mlir::PassWrapper<FusePass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FusePass)

  FusePass() = default;
  explicit FusePass(bool bf16_softcap_builtins) { bf16_softcap_builtins_ = bf16_softcap_builtins; }
  // Options are not copyable; Pass::clone copies their values after this.
  FusePass(const FusePass &other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const final { return "gpt-fuse"; }
  llvm::StringRef getDescription() const final {
    return "Group chains of adjacent elementwise gpt ops of one shape into gpt.fusion regions";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<gpt::GptDialect>();
  }

  void runOnOperation() override {
    getOperation()->walk([&](mlir::func::FuncOp func) {
      for (mlir::Block &block : func.getBody()) {
        for (const auto &group : Groups(block, bf16_softcap_builtins_)) Fuse(group);
      }
    });
  }

 private:
  Option<bool> bf16_softcap_builtins_{
      *this, "bf16-softcap-builtins",
      llvm::cl::desc("leave the bf16 softcap, its gradient and their roundings to the target's builtins"),
      llvm::cl::init(false)};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateFusePass(bool bf16_softcap_builtins) {
  return std::make_unique<FusePass>(bf16_softcap_builtins);
}

void RegisterFusePass() { mlir::PassRegistration<FusePass>(); }

}  // namespace gpt_sft::compiler
