// OpContext: what an op implementation (ops/*.cc) sees of a run: its op, its operands'
// tensors, result allocation with the shape check against the IR type, the donation test
// for in-place updates, the allocator, the collectives and the attention side table.
//
// Result shapes are computed by each implementation from its operands' run-time shapes;
// SetResult/AllocateResult compare them with the IR's result type, where a static dim that
// disagrees is an error naming the op, its location and both shapes.
#ifndef GPT_SFT_RUNTIME_INTERPRETER_OP_CONTEXT_H_
#define GPT_SFT_RUNTIME_INTERPRETER_OP_CONTEXT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "runtime/base/caching_allocator.h"
#include "runtime/base/tensor.h"
#include "runtime/interpreter/collectives.h"
#include "runtime/interpreter/prepared_function.h"

namespace gpt_sft::runtime::interp {

/// The values of one run of a PreparedFunction.
struct Frame {
  const PreparedFunction* fn = nullptr;
  std::vector<Tensor> slots;  // per slot; null once released
  std::vector<Tensor> lse;    // per slot of a gpt.attention result: its log-sum-exp [B,H,T]
  CachingAllocator* allocator = nullptr;
  Collectives* collectives = nullptr;

  /// Drops the run's reference to a value (and to its side-table entry).
  void Release(int slot) {
    slots[slot] = Tensor();
    lse[slot] = Tensor();
  }
};

/// The element type of a ranked tensor type of f32, f64 or i32; nullopt otherwise.
std::optional<DType> DTypeOfType(mlir::Type type);
/// The error for a type DTypeOfType rejects, naming `what`.
absl::Status UninterpretedTypeError(mlir::Type type, const std::string& what);

class OpContext {
 public:
  OpContext(Frame& frame, int step) : frame_(frame), step_(step), op_(frame.fn->steps[step].op) {}

  mlir::Operation* op() const { return op_; }
  template <typename OpT>
  OpT As() const {
    return llvm::cast<OpT>(op_);
  }

  /// The tensor of `value` (an operand of this op); the null tensor for a null value
  /// (an absent optional operand).
  const Tensor& Get(mlir::Value value) const;

  /// A fresh result buffer of `shape`, typed as the IR result `result`; checks `shape`
  /// against its static dims. Stores it as the result's value and returns it.
  absl::StatusOr<Tensor> AllocateResult(mlir::Value result, const Shape& shape);
  /// Stores `tensor` as `result`'s value after the same checks (element type included).
  absl::Status SetResult(mlir::Value result, Tensor tensor);

  /// Whether this op may write into `operand`'s buffer: this op is its last use, it is
  /// not passed twice to this op, and the run holds the only reference to its storage
  /// (owned and not kept by the caller, or a donated argument; see interpreter.h).
  bool CanOverwrite(mlir::Value operand) const;

  /// A scratch buffer (freed when the returned tensor goes).
  absl::StatusOr<Tensor> Scratch(DType dtype, const Shape& shape) const;

  CachingAllocator* allocator() const { return frame_.allocator; }
  Collectives& collectives() const { return *frame_.collectives; }

  /// The side table: the lse saved by the gpt.attention that produced `value` in this
  /// run (null tensor when none did).
  const Tensor& LseOf(mlir::Value value) const;
  void SetLse(mlir::Value value, Tensor lse);

  /// An InvalidArgument error prefixed with the op and its location.
  absl::Status Error(const std::string& message) const;
  absl::Status Unimplemented(const std::string& message) const;

 private:
  absl::Status CheckResult(mlir::Value result, DType dtype, const Shape& shape) const;
  int SlotOf(mlir::Value value) const { return frame_.fn->slot_of.lookup(value); }

  Frame& frame_;
  int step_;
  mlir::Operation* op_;
};

}  // namespace gpt_sft::runtime::interp

#endif  // GPT_SFT_RUNTIME_INTERPRETER_OP_CONTEXT_H_
