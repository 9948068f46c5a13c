// PreparedFunction: what the interpreter computes once per func.func before running it.
//   1. A slot per SSA value (block arguments first, then op results in order), so a run
//      keeps its values in a vector instead of a map.
//   2. A step per op with the op's implementation looked up in the registry; an op the
//      interpreter does not know fails here, before anything runs.
//   3. Liveness: the step at which each value is used for the last time, and per step the
//      slots to release right after it (as eager PyTorch frees a tensor when its last
//      reference goes), so a run's peak memory is what the program needs. Values never
//      used are released right after they are defined (arguments: before the first op).
// The func.return terminator is not a step: its operands are the run's results.
#ifndef GPT_SFT_RUNTIME_INTERPRETER_PREPARED_FUNCTION_H_
#define GPT_SFT_RUNTIME_INTERPRETER_PREPARED_FUNCTION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "runtime/interpreter/op_registry.h"

namespace gpt_sft::runtime::interp {

struct Step {
  mlir::Operation* op;
  OpFn fn;
  std::vector<int> release_after;  // slots whose last use is this step
};

struct PreparedFunction {
  mlir::func::FuncOp func;
  int num_slots = 0;
  llvm::DenseMap<mlir::Value, int> slot_of;
  std::vector<Step> steps;
  std::vector<int> release_at_start;  // arguments nothing uses
  std::vector<int> last_use_step;     // per slot; steps.size() = used by func.return
  std::vector<int> result_slots;      // func.return's operands
};

/// Fails (naming the op and its location) on an op without an implementation in
/// `registry`, on ops with regions, or on a body of more than one block.
absl::StatusOr<PreparedFunction> Prepare(mlir::func::FuncOp func, const OpRegistry& registry);

/// The same for the body of a region op (gpt.fusion): its block arguments are the
/// arguments and its terminator's (gpt.yield's) operands the results; `func` is null.
absl::StatusOr<PreparedFunction> PrepareRegionBody(mlir::Operation* op, const OpRegistry& registry);

/// "gpt.matmul at loc("step.mlir":12:5)", for error messages.
std::string DescribeOp(mlir::Operation* op);

/// The type as MLIR prints it ("tensor<4x?xf32>"), for messages.
std::string TypeToString(mlir::Type type);

}  // namespace gpt_sft::runtime::interp

#endif  // GPT_SFT_RUNTIME_INTERPRETER_PREPARED_FUNCTION_H_
