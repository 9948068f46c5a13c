//===- matmul_fusion.cc - what the GPU matmuls take over from their neighbours -===//
//
// This file implements FoldsIntoMatmul and AbsorbableConsumer (matmul_fusion.h). Both move
// work in time, so both prove that no op in between can tell:
//   * a folded transpose: its argument is never written during the entry point (no op
//     donates it; results named like it are copied home only at the return);
//   * an absorbed consumer Z of the matmul's result R computes at the matmul's place, so
//     (1) Z's other operands exist there (defined before the matmul);
//     (2) what Z writes is not read by the gemm (other workgroups still read A and B while
//         one writes), overlaps Z's other operands only exactly (same element, same
//         work-item, read before written), and is not R when R is still stored;
//     (3) the ops between the matmul and Z neither read nor write Z's output: placement ops
//         only (reshape views or copies, constants), checked byte for byte; or, for the
//         gradient accumulation `Z = gpt.add %acc, R` whose result is donated to the
//         argument %acc, nothing but Z uses %acc or is donated it.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/matmul_fusion.h"

#include <optional>
#include <utility>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Operation;
using ::mlir::Value;
using Bytes = std::optional<std::pair<int64_t, int64_t>>;

constexpr char kDonatesAttr[] = "gpt.donates";

/// The entry-point argument `v` is, or null.
mlir::BlockArgument EntryArgument(Value v) {
  auto arg = llvm::dyn_cast<mlir::BlockArgument>(v);
  if (!arg || !llvm::isa<mlir::func::FuncOp>(arg.getOwner()->getParentOp())) return {};
  return arg;
}

/// The argument index `op`'s result `r` is donated to, or -1.
int64_t DonatedArgument(Operation* op, unsigned r) {
  auto donates = op->getAttrOfType<mlir::DenseI64ArrayAttr>(kDonatesAttr);
  return donates && r < donates.size() ? donates[r] : -1;
}

bool DonatesArgument(Operation* op, int64_t index) {
  auto donates = op->getAttrOfType<mlir::DenseI64ArrayAttr>(kDonatesAttr);
  return donates && llvm::is_contained(donates.asArrayRef(), index);
}

/// True when no op of `arg`'s function is donated its buffer.
bool NeverOverwritten(mlir::BlockArgument arg) {
  bool written = false;
  arg.getOwner()->getParentOp()->walk([&](Operation* op) { written |= DonatesArgument(op, arg.getArgNumber()); });
  return !written;
}

bool Overlap(const Bytes& a, const Bytes& b) { return a && b && a->first < b->second && b->first < a->second; }

/// Where a value lives, for overlap checks: arena bytes, or the argument it is.
struct Place {
  Bytes bytes;
  int64_t argument = -1;
};

Place PlaceOf(lowering::OpLowering& lowering, Value v) {
  Place p{lowering.PlannedArenaBytes(v), -1};
  if (mlir::BlockArgument arg = EntryArgument(v)) p.argument = arg.getArgNumber();
  return p;
}

/// `out`, a result of Z, as the place it is written.
Place OutputPlace(lowering::OpLowering& lowering, Operation* z, unsigned r) {
  Place p{lowering.PlannedArenaBytes(z->getResult(r)), DonatedArgument(z, r)};
  return p;
}

bool Overlap(const Place& a, const Place& b) {
  return Overlap(a.bytes, b.bytes) || (a.argument >= 0 && a.argument == b.argument);
}
bool Same(const Place& a, const Place& b) {
  return a.argument >= 0 ? a.argument == b.argument : (a.bytes && b.bytes && *a.bytes == *b.bytes);
}

/// An elementwise op the epilogue can compute from one scalar per operand.
bool IsElementwise(Operation* op) {
  if (llvm::isa<gpt::AddOp, gpt::MulOp, gpt::ReluSquareOp, gpt::ReluSquareGradOp, gpt::SoftcapOp, gpt::SoftcapGradOp,
                gpt::RoundBf16Op>(op)) {
    return true;
  }
  auto generic = llvm::dyn_cast<mlir::linalg::GenericOp>(op);
  if (!generic || !generic.getRegion().hasOneBlock()) return false;
  for (mlir::AffineMap map : generic.getIndexingMapsArray()) {
    if (!map.isIdentity()) return false;
  }
  // The epilogue knows the flat index only, not the generic's iteration indices.
  return generic.getRegion().front().getOps<mlir::linalg::IndexOp>().empty();
}

/// The operands Z computes from (a generic's outs are only its result shapes).
llvm::SmallVector<Value> Inputs(Operation* z) {
  if (auto generic = llvm::dyn_cast<mlir::linalg::GenericOp>(z)) return generic.getDpsInputs();
  return llvm::SmallVector<Value>(z->getOperands());
}

bool IsPlacement(Operation* op) { return llvm::isa<gpt::ReshapeOp, mlir::tensor::EmptyOp, mlir::arith::ConstantOp>(op); }

/// The gradient accumulation `z = gpt.add %acc, r` (either order) into the donated argument
/// %acc that nothing else reads or is donated.
bool IsPrivateAccumulation(Operation* z, Value r) {
  auto add = llvm::dyn_cast<gpt::AddOp>(z);
  if (!add) return false;
  Value other = add.getLhs() == r ? add.getRhs() : add.getLhs();
  mlir::BlockArgument acc = EntryArgument(other);
  if (!acc || DonatedArgument(z, 0) != acc.getArgNumber() || !acc.hasOneUse()) return false;
  bool donated_elsewhere = false;
  acc.getOwner()->getParentOp()->walk(
      [&](Operation* op) { donated_elsewhere |= op != z && DonatesArgument(op, acc.getArgNumber()); });
  return !donated_elsewhere;
}

/// Rules (1) and (3) of the file comment: Z's operands exist at the matmul and the ops
/// between leave Z's outputs alone.
bool CanMoveUp(lowering::OpLowering& lowering, Operation* matmul, Operation* z, Value r,
               llvm::ArrayRef<Place> outputs) {
  for (Value v : Inputs(z)) {
    Operation* def = v.getDefiningOp();
    if (v != r && def != nullptr && !def->isBeforeInBlock(matmul)) return false;
  }
  if (IsPrivateAccumulation(z, r)) return true;
  for (Operation* op = matmul->getNextNode(); op != z; op = op->getNextNode()) {
    if (!IsPlacement(op)) return false;
    llvm::SmallVector<Value> touched(op->getOperands());
    touched.append(op->result_begin(), op->result_end());
    for (Value v : touched) {
      const Place place = PlaceOf(lowering, v);
      for (const Place& out : outputs) {
        if (Overlap(place, out)) return false;
      }
    }
  }
  return true;
}

}  // namespace

bool FoldsIntoMatmul(gpt::TransposeOp t) {
  if (t.getPerm() != llvm::ArrayRef<int64_t>{1, 0} || t.getResult().use_empty()) return false;
  mlir::BlockArgument arg = EntryArgument(t.getX());
  if (!arg || !NeverOverwritten(arg)) return false;
  for (mlir::OpOperand& use : t.getResult().getUses()) {
    if (!llvm::isa<gpt::MatmulOp>(use.getOwner()) || use.getOperandNumber() != 1) return false;
  }
  return true;
}

Operation* AbsorbableConsumer(lowering::OpLowering& lowering) {
  Operation* matmul = lowering.op();
  Value r = matmul->getResult(0);
  Operation* z = nullptr;
  for (Operation* user : r.getUsers()) {
    if (IsElementwise(user) && user->getBlock() == matmul->getBlock() && (z == nullptr || user->isBeforeInBlock(z))) {
      z = user;
    }
  }
  if (z == nullptr) return nullptr;
  const auto count = llvm::cast<mlir::ShapedType>(r.getType()).getNumElements();
  llvm::SmallVector<Value> values = Inputs(z);
  values.append(z->result_begin(), z->result_end());
  for (Value v : values) {
    auto type = llvm::dyn_cast<mlir::ShapedType>(v.getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() != count || !type.getElementType().isF32()) {
      return nullptr;
    }
  }
  // Rule (2): the places Z writes against what the gemm and Z read.
  llvm::SmallVector<Place> outputs;
  for (unsigned i = 0; i < z->getNumResults(); ++i) outputs.push_back(OutputPlace(lowering, z, i));
  const bool stores_r = llvm::any_of(r.getUsers(), [&](Operation* u) { return u != z; });
  for (const Place& out : outputs) {
    if (!out.bytes && out.argument < 0) return nullptr;  // placed nowhere we can see
    for (Value in : matmul->getOperands()) {
      auto t = in.getDefiningOp<gpt::TransposeOp>();
      if (t && FoldsIntoMatmul(t)) in = t.getX();  // what the gemm reads
      if (Overlap(out, PlaceOf(lowering, in))) return nullptr;
    }
    if (stores_r && Overlap(out, PlaceOf(lowering, r))) return nullptr;
    for (Value in : Inputs(z)) {
      if (in == r) continue;
      const Place place = PlaceOf(lowering, in);
      if (Overlap(out, place) && !Same(out, place)) return nullptr;
    }
  }
  return CanMoveUp(lowering, matmul, z, r, outputs) ? z : nullptr;
}

}  // namespace gpt_sft::compiler::gpu_lowering
