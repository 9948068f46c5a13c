//===- muon_group_fusion.cc - same-shape Muon updates run as one group ----===//
//
// This file implements MatchMuonGroup: it walks the block after the first update, and takes
// each later update that agrees with it, whose operands exist at its place, and whose bytes
// conflict neither with the group so far nor with the ops it would jump over. A conflict is
// a write on either side: two reads of one buffer (every update reads the learning rate)
// are none.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/muon_group_fusion.h"

#include <optional>

#include "llvm/ADT/STLExtras.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace gpt_sft::compiler::lowering {
namespace {

using ::mlir::Operation;
using ::mlir::Value;

/// gpt-plan-buffers' placement of a result in an argument's buffer (planned_function.h).
constexpr char kDonatesAttr[] = "gpt.donates";

/// What the launch takes once for the whole group.
bool SameLaunch(gpt::MuonUpdateOp a, gpt::MuonUpdateOp b) {
  return a.getGrad().getType() == b.getGrad().getType() && a.getMomentum() == b.getMomentum() &&
         a.getNesterov() == b.getNesterov() && a.getNsSteps() == b.getNsSteps();
}

/// The gpt.name of the slot `v` lives in: an argument's, or, for a result the plan donated to
/// an argument (gpt.donates), that argument's; none for any other value.
std::optional<llvm::StringRef> SlotName(mlir::func::FuncOp func, Value v) {
  int64_t argument = -1;
  if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v)) {
    if (arg.getOwner()->getParentOp() == func.getOperation()) argument = arg.getArgNumber();
  } else if (auto result = llvm::dyn_cast<mlir::OpResult>(v)) {
    auto donates = result.getOwner()->getAttrOfType<mlir::DenseI64ArrayAttr>(kDonatesAttr);
    if (donates && static_cast<int64_t>(result.getResultNumber()) < donates.size()) {
      argument = donates[result.getResultNumber()];
    }
  }
  if (argument < 0 || argument >= static_cast<int64_t>(func.getNumArguments())) return std::nullopt;
  auto name = func.getArgAttrOfType<mlir::StringAttr>(argument, "gpt.name");
  if (!name) return std::nullopt;
  return name.getValue();
}

bool IsConstant(Value v) { return v.getDefiningOp<mlir::arith::ConstantOp>() != nullptr; }

/// The buffers an op reads: its tensor operands that hold bytes (a tensor.empty holds none).
llvm::SmallVector<Value> Reads(Operation* op) {
  llvm::SmallVector<Value> reads;
  for (Value v : op->getOperands()) {
    if (llvm::isa<mlir::RankedTensorType>(v.getType()) && !v.getDefiningOp<mlir::tensor::EmptyOp>()) {
      reads.push_back(v);
    }
  }
  return reads;
}

/// The buffers an op writes: its results.
llvm::SmallVector<Value> Writes(Operation* op) { return llvm::SmallVector<Value>(op->getResults()); }

class Grouping {
 public:
  Grouping(gpt::MuonUpdateOp first, DisjointBytesFn disjoint)
      : func_(first->getParentOfType<mlir::func::FuncOp>()), disjoint_(disjoint) {}

  /// Whether `a` and `b` may run in either order, or at once: neither writes a byte the other
  /// reads or writes.
  bool Commute(Operation* a, Operation* b) const {
    const llvm::SmallVector<Value> writes_a = Writes(a), writes_b = Writes(b);
    return NoneShared(writes_a, Reads(b)) && NoneShared(writes_a, writes_b) && NoneShared(writes_b, Reads(a));
  }

 private:
  /// Whether `a` and `b` share no byte.
  bool Disjoint(Value a, Value b) const {
    if (IsConstant(a) || IsConstant(b)) return true;  // read-only: never the one written
    if (disjoint_(a, b)) return true;
    const std::optional<llvm::StringRef> sa = SlotName(func_, a), sb = SlotName(func_, b);
    return sa && sb && *sa != *sb;
  }

  bool NoneShared(llvm::ArrayRef<Value> as, llvm::ArrayRef<Value> bs) const {
    return llvm::all_of(as, [&](Value a) { return llvm::all_of(bs, [&](Value b) { return Disjoint(a, b); }); });
  }

  mlir::func::FuncOp func_;
  DisjointBytesFn disjoint_;
};

/// Whether every operand of `u` exists at `first`'s place.
bool OperandsExistAt(gpt::MuonUpdateOp u, gpt::MuonUpdateOp first) {
  return llvm::all_of(u->getOperands(), [&](Value v) {
    Operation* def = v.getDefiningOp();
    return def == nullptr || def->isBeforeInBlock(first);
  });
}

/// Ops that launch nothing and write no byte at run time.
bool WritesNothing(Operation* op) { return llvm::isa<mlir::tensor::EmptyOp, mlir::arith::ConstantOp>(op); }

}  // namespace

llvm::SmallVector<gpt::MuonUpdateOp> MatchMuonGroup(gpt::MuonUpdateOp first, DisjointBytesFn disjoint,
                                                    AbsorbedFn absorbed) {
  llvm::SmallVector<gpt::MuonUpdateOp> group = {first};
  if (!first->getParentOfType<mlir::func::FuncOp>()) return group;
  const Grouping bytes(first, disjoint);
  // The ops `first`'s launch jumps over for a later member: the window so far, minus members.
  llvm::SmallVector<Operation*> stay;
  for (Operation* op = first->getNextNode(); op != nullptr; op = op->getNextNode()) {
    auto u = llvm::dyn_cast<gpt::MuonUpdateOp>(op);
    const bool joins = u && static_cast<int64_t>(group.size()) < kMaxMuonGroup && !absorbed(u) &&
                       SameLaunch(first, u) && OperandsExistAt(u, first) &&
                       llvm::all_of(group, [&](gpt::MuonUpdateOp m) { return bytes.Commute(m, u); }) &&
                       llvm::all_of(stay, [&](Operation* s) { return bytes.Commute(s, u); });
    if (joins) {
      group.push_back(u);
    } else if (!WritesNothing(op)) {
      stay.push_back(op);
    }
  }
  return group;
}

}  // namespace gpt_sft::compiler::lowering
