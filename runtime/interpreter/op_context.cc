// Implements OpContext.
#include "runtime/interpreter/op_context.h"

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinTypes.h"

namespace gpt_sft::runtime::interp {

std::optional<DType> DTypeOfType(mlir::Type type) {
  auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!ranked) return std::nullopt;
  mlir::Type element = ranked.getElementType();
  if (element.isF32()) return DType::kF32;
  if (element.isF64()) return DType::kF64;
  if (element.isSignlessInteger(32)) return DType::kI32;
  return std::nullopt;
}

absl::Status UninterpretedTypeError(mlir::Type type, const std::string& what) {
  return absl::UnimplementedError(absl::StrCat(what, ": type ", TypeToString(type),
                                               " is not interpreted (ranked tensors of f32, f64 and i32 are)"));
}

const Tensor& OpContext::Get(mlir::Value value) const {
  static const Tensor kNull;
  if (!value) return kNull;
  return frame_.slots[SlotOf(value)];
}

absl::Status OpContext::CheckResult(mlir::Value result, DType dtype, const Shape& shape) const {
  auto type = llvm::cast<mlir::RankedTensorType>(result.getType());
  const int index = static_cast<int>(llvm::cast<mlir::OpResult>(result).getResultNumber());
  // The messages are built only on failure: DescribeOp prints the location.
  std::optional<DType> expected = DTypeOfType(type);
  if (!expected) return UninterpretedTypeError(type, absl::StrCat(DescribeOp(op_), " result ", index));
  bool ok = *expected == dtype && type.getRank() == static_cast<int64_t>(shape.size());
  for (size_t i = 0; ok && i < shape.size(); ++i) {
    ok = type.isDynamicDim(i) || type.getDimSize(i) == shape[i];
  }
  if (ok) return absl::OkStatus();
  return Error(absl::StrCat("result ", index, " has type ", TypeToString(type), " but the operands give ",
                            ShapeToString(shape), " ", DTypeName(dtype)));
}

absl::StatusOr<Tensor> OpContext::AllocateResult(mlir::Value result, const Shape& shape) {
  std::optional<DType> dtype = DTypeOfType(result.getType());
  if (!dtype) return UninterpretedTypeError(result.getType(), DescribeOp(op_));
  if (absl::Status s = CheckResult(result, *dtype, shape); !s.ok()) return s;
  Tensor t = Tensor::Empty(*dtype, shape, frame_.allocator);
  if (!t.defined()) {
    return absl::ResourceExhaustedError(
        absl::StrCat(DescribeOp(op_), ": out of memory for a result of ", ShapeToString(shape)));
  }
  frame_.slots[SlotOf(result)] = t;
  return t;
}

absl::Status OpContext::SetResult(mlir::Value result, Tensor tensor) {
  if (absl::Status s = CheckResult(result, tensor.dtype(), tensor.shape()); !s.ok()) return s;
  frame_.slots[SlotOf(result)] = std::move(tensor);
  return absl::OkStatus();
}

bool OpContext::CanOverwrite(mlir::Value operand) const {
  const int slot = SlotOf(operand);
  if (frame_.fn->last_use_step[slot] != step_) return false;
  int uses_here = 0;
  for (mlir::Value v : op_->getOperands()) uses_here += v == operand;
  const Tensor& t = frame_.slots[slot];
  return uses_here == 1 && !t.is_view() && t.storage_use_count() == 1;
}

absl::StatusOr<Tensor> OpContext::Scratch(DType dtype, const Shape& shape) const {
  Tensor t = Tensor::Empty(dtype, shape, frame_.allocator);
  if (!t.defined()) {
    return absl::ResourceExhaustedError(
        absl::StrCat(DescribeOp(op_), ": out of memory for scratch of ", ShapeToString(shape)));
  }
  return t;
}

const Tensor& OpContext::LseOf(mlir::Value value) const { return frame_.lse[SlotOf(value)]; }

void OpContext::SetLse(mlir::Value value, Tensor lse) { frame_.lse[SlotOf(value)] = std::move(lse); }

absl::Status OpContext::Error(const std::string& message) const {
  return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op_), ": ", message));
}

absl::Status OpContext::Unimplemented(const std::string& message) const {
  return absl::UnimplementedError(absl::StrCat(DescribeOp(op_), ": ", message));
}

}  // namespace gpt_sft::runtime::interp
