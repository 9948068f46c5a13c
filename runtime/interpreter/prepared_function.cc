// Implements Prepare: slots, steps and last uses of one func.func (see the header).
#include "runtime/interpreter/prepared_function.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"

namespace gpt_sft::runtime::interp {

std::string DescribeOp(mlir::Operation* op) {
  std::string location;
  llvm::raw_string_ostream os(location);
  op->getLoc().print(os);
  return op->getName().getStringRef().str() + " at " + os.str();
}

namespace {

/// Slots, steps and last uses of `block`, whose terminator's operands are the results;
/// `name` ("@micro_step", "the gpt.fusion at ...") goes into errors.
absl::StatusOr<PreparedFunction> PrepareBlock(mlir::Block& block, const std::string& name,
                                              const OpRegistry& registry) {
  PreparedFunction fn;
  for (mlir::BlockArgument arg : block.getArguments()) fn.slot_of[arg] = fn.num_slots++;

  // 1-2. Slots and steps.
  mlir::Operation* terminator = block.getTerminator();
  for (mlir::Operation& op : block.without_terminator()) {
    // A gpt.fusion runs its region itself (ops/fusion_ops.cc).
    if (op.getNumRegions() != 0 && op.getName().getStringRef() != "gpt.fusion") {
      return absl::UnimplementedError(
          absl::StrCat(DescribeOp(&op), " in ", name, ": ops with regions are not interpreted"));
    }
    OpFn impl = registry.Find(op.getName().getStringRef().str());
    if (impl == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          "unknown op ", DescribeOp(&op), " in ", name,
          ": the interpreter has no implementation for it (a gpt.gradients placeholder means: "
          "run gpt-autodiff first)"));
    }
    fn.steps.push_back(Step{&op, impl, {}});
    for (mlir::Value result : op.getResults()) fn.slot_of[result] = fn.num_slots++;
  }
  if (!llvm::isa<mlir::func::ReturnOp>(terminator) && terminator->getName().getStringRef() != "gpt.yield") {
    return absl::UnimplementedError(
        absl::StrCat(DescribeOp(terminator), " ends ", name, "; expected func.return"));
  }

  // 3. Last uses: the largest step index among a value's users (func.return counts as
  // step steps.size()); -1 for a value nothing uses.
  const int return_step = static_cast<int>(fn.steps.size());
  fn.last_use_step.assign(fn.num_slots, -1);
  for (int i = 0; i < return_step; ++i) {
    for (mlir::Value operand : fn.steps[i].op->getOperands()) {
      int& last = fn.last_use_step[fn.slot_of.lookup(operand)];
      last = std::max(last, i);
    }
  }
  for (mlir::Value operand : terminator->getOperands()) {
    const int slot = fn.slot_of.lookup(operand);
    fn.last_use_step[slot] = return_step;
    fn.result_slots.push_back(slot);
  }
  for (int i = 0; i < return_step; ++i) {
    for (mlir::Value operand : fn.steps[i].op->getOperands()) {
      const int slot = fn.slot_of.lookup(operand);
      std::vector<int>& release = fn.steps[i].release_after;
      if (fn.last_use_step[slot] == i && std::find(release.begin(), release.end(), slot) == release.end()) {
        release.push_back(slot);
      }
    }
    for (mlir::Value result : fn.steps[i].op->getResults()) {
      const int slot = fn.slot_of.lookup(result);
      if (fn.last_use_step[slot] < 0) fn.steps[i].release_after.push_back(slot);
    }
  }
  for (mlir::BlockArgument arg : block.getArguments()) {
    const int slot = fn.slot_of.lookup(arg);
    if (fn.last_use_step[slot] < 0) fn.release_at_start.push_back(slot);
  }
  return fn;
}

}  // namespace

absl::StatusOr<PreparedFunction> Prepare(mlir::func::FuncOp func, const OpRegistry& registry) {
  const std::string name = func.getSymName().str();
  if (func.isExternal()) return absl::InvalidArgumentError(absl::StrCat("@", name, " has no body"));
  if (!func.getBody().hasOneBlock()) {
    return absl::UnimplementedError(
        absl::StrCat("@", name, " has more than one block; the interpreter runs straight-line code"));
  }
  absl::StatusOr<PreparedFunction> fn = PrepareBlock(func.getBody().front(), "@" + name, registry);
  if (fn.ok()) fn->func = func;
  return fn;
}

absl::StatusOr<PreparedFunction> PrepareRegionBody(mlir::Operation* op, const OpRegistry& registry) {
  if (op->getNumRegions() != 1 || !op->getRegion(0).hasOneBlock()) {
    return absl::UnimplementedError(absl::StrCat(DescribeOp(op), ": expected one region of one block"));
  }
  return PrepareBlock(op->getRegion(0).front(), "the body of " + DescribeOp(op), registry);
}

std::string TypeToString(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return os.str();
}

}  // namespace gpt_sft::runtime::interp
