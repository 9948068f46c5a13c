//===- buffer_plan.cc - static memory planning of one function ------------===//
//
// This file implements PlanBuffers in four steps:
// 1. number the ops of the function's block; a value's live range runs from
//    its defining op to the last op of the block that reads it (the ancestor in
//    the block of a use nested in a region, so a fusion region's reads count);
// 2. size every result: element bytes x static elements (2 for a result marked
//    gpt.bf16_storage, bf16_storage.h), 64-byte aligned; a
//    dynamic or unsized type is an error naming the op and value;
// 3. donate: a result of gpt.adamw_update / gpt.muon_update overwrites its
//    param/state operand, and micro_step's `gpt.add %grad/<param>, %g` its
//    gradient buffer (as does the gpt.fusion that accumulates it under autocast,
//    the rounding of %g fused in), in place when that operand is a function
//    argument the op is the last and only reader of (parameters, gradients and
//    optimizer state are owned by the caller and updated in place);
// 4. place the other slots in one arena, largest first, each at the best-fit
//    gap among the placed slots live at the same time (TFLite's "greedy by
//    size"): values live together never overlap, values that are not may
//    share bytes.
// A gpt.reshape of an op result in the block is a view: its slot shares the operand's
// (the root of a chain of reshapes), whose live range grows to the view's last use, so
// nothing is placed over bytes a view still reads. Reshapes of arguments keep a copy (the
// caller's buffers are not planned here). Likewise an elementwise op's result takes the
// bytes of an operand of its type that dies at it (in place, as eager frameworks do).
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/buffer_plan.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/gpt_ops.h"
#include "compiler/transforms/bf16_storage.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace gpt_sft::compiler {
namespace {

int64_t AlignUp(int64_t bytes, int64_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

std::string Printed(mlir::Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

std::string Printed(mlir::Value value) {
  std::string s;
  llvm::raw_string_ostream os(s);
  value.printAsOperand(os, mlir::OpPrintingFlags());
  return s;
}

/// Bytes of one element, or nullopt for a type with no fixed size.
std::optional<int64_t> ElementBytes(mlir::Type type) {
  if (type.isIntOrFloat()) return (type.getIntOrFloatBitWidth() + 7) / 8;
  if (llvm::isa<mlir::IndexType>(type)) return 8;
  if (auto complex = llvm::dyn_cast<mlir::ComplexType>(type)) {
    std::optional<int64_t> part = ElementBytes(complex.getElementType());
    if (part) return 2 * *part;
  }
  return std::nullopt;
}

/// The unaligned bytes of a result, or an error naming it.
absl::StatusOr<int64_t> ResultBytes(mlir::OpResult result) {
  mlir::Type type = result.getType();
  auto Error = [&](const char* why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gpt-plan-buffers: result #", result.getResultNumber(), " (", Printed(mlir::Value(result)),
        ") of '", result.getOwner()->getName().getStringRef().str(), "' has the ", why, " type '",
        Printed(type), "'; buffers are planned for static shapes only"));
  };
  if (type.isIntOrIndexOrFloat()) return *ElementBytes(type);
  auto shaped = llvm::dyn_cast<mlir::ShapedType>(type);
  if (!shaped || !shaped.hasRank() || !shaped.hasStaticShape()) {
    return Error(shaped ? "dynamic" : "unsized");
  }
  std::optional<int64_t> element = ElementBytes(shaped.getElementType());
  if (!element) return Error("unsized");
  if (StoredAsBf16(result)) element = 2;
  return *element * shaped.getNumElements();
}

/// micro_step's accumulation `gpt.add %grad_arg, %g`: the gradient buffers, named "grad/<param>",
/// are the caller's and updated in place, as the parameters and optimizer state are.
bool IsGradientAccumulation(mlir::Operation* op) {
  auto add = llvm::dyn_cast<gpt::AddOp>(op);
  auto arg = add ? llvm::dyn_cast<mlir::BlockArgument>(add.getLhs()) : mlir::BlockArgument();
  auto func = arg ? llvm::dyn_cast<mlir::func::FuncOp>(arg.getOwner()->getParentOp()) : mlir::func::FuncOp();
  if (!func) return false;
  auto name = func.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(), "gpt.name");
  return name && name.getValue().starts_with("grad/");
}

/// A gpt.fusion (elementwise) whose result `result` the function returns as a gradient,
/// "grad/<param>", computed from the argument of that name among its operands: micro_step's
/// accumulation with autocast's rounding of the new gradient fused in (round_bf16 then add).
/// That operand, which the result may overwrite element by element.
std::optional<unsigned> FusedGradientAccumulationOperand(mlir::Operation* op, unsigned result) {
  if (!llvm::isa<gpt::FusionOp>(op)) return std::nullopt;
  auto func = op->getParentOfType<mlir::func::FuncOp>();
  if (!func || op->getBlock() != &func.getBody().front()) return std::nullopt;
  for (mlir::OpOperand& use : op->getResult(result).getUses()) {
    if (!llvm::isa<mlir::func::ReturnOp>(use.getOwner())) continue;
    auto name = func.getResultAttrOfType<mlir::StringAttr>(use.getOperandNumber(), "gpt.name");
    if (!name || !name.getValue().starts_with("grad/")) continue;
    for (mlir::OpOperand& operand : op->getOpOperands()) {
      auto arg = llvm::dyn_cast<mlir::BlockArgument>(operand.get());
      if (arg && arg.getOwner() == op->getBlock() &&
          func.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(), "gpt.name") == name) {
        return operand.getOperandNumber();
      }
    }
  }
  return std::nullopt;
}

/// For an optimizer update or a gradient accumulation, the operand each result overwrites in
/// place.
std::optional<unsigned> UpdatedOperand(mlir::Operation* op, unsigned result) {
  if (IsGradientAccumulation(op)) return 0u;
  if (std::optional<unsigned> operand = FusedGradientAccumulationOperand(op, result)) return operand;
  if (llvm::isa<gpt::AdamwUpdateOp>(op)) {
    static constexpr unsigned kOperands[] = {0, 2, 3};  // param, exp_avg, exp_avg_sq
    return kOperands[result];
  }
  if (llvm::isa<gpt::MuonUpdateOp>(op)) {
    static constexpr unsigned kOperands[] = {0, 2};  // param, momentum_buffer
    return kOperands[result];
  }
  return std::nullopt;
}

/// Ops whose every result element depends only on the same element of each operand, so a
/// result may overwrite an operand of its type that dies here (the kernels read element i
/// before writing it).
bool IsElementwise(mlir::Operation* op) {
  return llvm::isa<gpt::AddOp, gpt::MulOp, gpt::ReluSquareOp, gpt::ReluSquareGradOp, gpt::SoftcapOp,
                   gpt::SoftcapGradOp, gpt::RoundBf16Op, gpt::FusionOp>(op);
}

/// The index of the last op of `block` reading `value`, or `fallback` if none does.
int64_t LastUse(mlir::Value value, mlir::Block& block,
                const llvm::DenseMap<mlir::Operation*, int64_t>& index, int64_t fallback) {
  int64_t last = fallback;
  for (mlir::Operation* user : value.getUsers()) {
    mlir::Operation* in_block = block.findAncestorOpInBlock(*user);
    if (in_block) last = std::max(last, index.lookup(in_block));
  }
  return last;
}

/// The argument `slot` may overwrite in place, or -1.
int DonatableArgument(const Slot& slot, mlir::Block& block,
                      const llvm::DenseMap<mlir::Operation*, int64_t>& index) {
  std::optional<unsigned> operand = UpdatedOperand(slot.op, slot.result);
  if (!operand) return -1;
  auto arg = llvm::dyn_cast<mlir::BlockArgument>(slot.op->getOperand(*operand));
  if (!arg || arg.getOwner() != &block) return -1;
  // In place is safe only if nothing reads the argument after the update starts:
  // this op reads it once and no later op reads it.
  int reads_here = llvm::count(slot.op->getOperands(), mlir::Value(arg));
  if (reads_here != 1 || LastUse(arg, block, index, -1) != slot.first) return -1;
  return static_cast<int>(arg.getArgNumber());
}

/// Step 4: offsets for the slots not donated.
void PlaceInArena(std::vector<Slot>& slots) {
  std::vector<size_t> order;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i].donated() && !slots[i].aliased()) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return slots[a].bytes > slots[b].bytes; });
  std::vector<size_t> placed;
  for (size_t i : order) {
    Slot& slot = slots[i];
    std::vector<const Slot*> neighbours;
    for (size_t j : placed) {
      if (slots[j].LiveWith(slot)) neighbours.push_back(&slots[j]);
    }
    std::sort(neighbours.begin(), neighbours.end(),
              [](const Slot* a, const Slot* b) { return a->offset < b->offset; });
    int64_t cursor = 0, best = -1, best_gap = 0;
    for (const Slot* n : neighbours) {
      int64_t gap = n->offset - cursor;
      if (gap >= slot.bytes && (best < 0 || gap < best_gap)) {
        best = cursor;
        best_gap = gap;
      }
      cursor = std::max(cursor, n->offset + n->bytes);
    }
    slot.offset = best >= 0 ? best : cursor;
    placed.push_back(i);
  }
  for (Slot& slot : slots) {
    if (slot.aliased()) slot.offset = slots[slot.alias_of].offset;
  }
}

/// The most arena bytes live at any one op: no arena can be smaller.
int64_t LivePeak(const std::vector<Slot>& slots, int64_t num_ops) {
  std::vector<int64_t> delta(num_ops + 1, 0);
  for (const Slot& slot : slots) {
    if (slot.donated() || slot.aliased()) continue;
    delta[slot.first] += slot.bytes;
    delta[slot.last + 1] -= slot.bytes;
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta) peak = std::max(peak, live += d);
  return peak;
}

}  // namespace

int64_t BufferPlan::num_arena_slots() const {
  return llvm::count_if(slots, [](const Slot& s) { return !s.donated() && !s.aliased(); });
}

absl::StatusOr<BufferPlan> PlanBuffers(mlir::func::FuncOp func, mlir::Operation** at_fault, int64_t alignment) {
  if (!func.getBody().hasOneBlock()) {
    if (at_fault) *at_fault = func;
    return absl::InvalidArgumentError(absl::StrCat(
        "gpt-plan-buffers: function @", func.getSymName().str(), " has ",
        func.getBody().getBlocks().size(), " blocks; buffers are planned for one block"));
  }
  mlir::Block& block = func.getBody().front();
  llvm::DenseMap<mlir::Operation*, int64_t> index;
  for (mlir::Operation& op : block) index.try_emplace(&op, static_cast<int64_t>(index.size()));

  BufferPlan plan;
  llvm::DenseMap<mlir::Value, int> slot_of;
  for (mlir::Operation& op : block) {
    const int64_t at = index.lookup(&op);
    llvm::DenseSet<int> taken;  // slots a result of this op already writes in place
    for (mlir::OpResult result : op.getResults()) {
      absl::StatusOr<int64_t> bytes = ResultBytes(result);
      if (!bytes.ok()) {
        if (at_fault) *at_fault = &op;
        return bytes.status();
      }
      Slot slot;
      slot.op = &op;
      slot.result = static_cast<int>(result.getResultNumber());
      slot.bytes = AlignUp(*bytes, alignment);
      slot.first = at;
      slot.last = LastUse(result, block, index, at);
      slot.donated_arg = DonatableArgument(slot, block, index);
      auto root_of = [&](int i) { return plan.slots[i].aliased() ? plan.slots[i].alias_of : i; };
      if (auto reshape = llvm::dyn_cast<gpt::ReshapeOp>(&op)) {
        auto it = slot_of.find(reshape.getX());
        if (it != slot_of.end()) {
          const int root = root_of(it->second);
          Slot& shared = plan.slots[root];
          shared.last = std::max(shared.last, slot.last);
          slot.alias_of = root;
          slot.donated_arg = shared.donated_arg;
        }
      } else if (!slot.donated() && IsElementwise(&op)) {
        // In place: an operand of the same type whose bytes nothing reads after this op; the
        // last ones first (a gradient op's incoming gradient, so its forward value, which an
        // epilogue-fused producer may still read, keeps its bytes).
        for (mlir::Value operand : llvm::reverse(op.getOperands())) {
          auto it = slot_of.find(operand);
          // Bytes shared in place must hold one storage type: a bf16 result over f32 operand
          // bytes would overwrite elements other work-items have yet to read.
          if (it == slot_of.end() || operand.getType() != result.getType() ||
              StoredAsBf16(operand) != StoredAsBf16(result) || llvm::count(op.getOperands(), operand) != 1) {
            continue;
          }
          const int root = root_of(it->second);
          Slot& shared = plan.slots[root];
          if (shared.donated() || shared.last != at || taken.contains(root)) continue;
          shared.last = std::max(shared.last, slot.last);
          slot.alias_of = root;
          taken.insert(root);
          break;
        }
      }
      slot_of[result] = static_cast<int>(plan.slots.size());
      plan.slots.push_back(slot);
    }
  }
  PlaceInArena(plan.slots);
  for (const Slot& slot : plan.slots) {
    if (slot.aliased()) {
      plan.aliased_bytes += slot.bytes;
      continue;
    }
    if (slot.donated()) {
      plan.donated_bytes += slot.bytes;
      continue;
    }
    plan.naive_bytes += slot.bytes;
    plan.arena_bytes = std::max(plan.arena_bytes, slot.offset + slot.bytes);
  }
  plan.live_peak_bytes = LivePeak(plan.slots, static_cast<int64_t>(index.size()));
  return plan;
}

}  // namespace gpt_sft::compiler
