//===- shape_rules.cc - helpers the gpt shape rules share -----------------===//
//
// This file implements the dim-compatibility and error helpers of
// shape_rules.h.
//
//===----------------------------------------------------------------------===//

#include "ir/shape_rules.h"

#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"

namespace gpt_sft::compiler::gpt {

bool DimsCompatible(int64_t a, int64_t b) {
  return a == b || mlir::ShapedType::isDynamic(a) || mlir::ShapedType::isDynamic(b);
}

int64_t MergeDims(int64_t a, int64_t b) {
  return mlir::ShapedType::isDynamic(a) ? b : a;
}

std::string TypeString(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return os.str();
}

mlir::LogicalResult ShapeError(std::optional<mlir::Location> loc, llvm::StringRef op,
                               const llvm::Twine &message) {
  return mlir::emitOptionalError(loc, "gpt.", op, ": ", message.str());
}

mlir::RankedTensorType RankedOrError(std::optional<mlir::Location> loc,
                                     llvm::StringRef op, llvm::StringRef what,
                                     mlir::Value value) {
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(value.getType());
  if (!type) {
    (void)ShapeError(loc, op, llvm::Twine(what) + " must be a ranked tensor, got " +
                                  TypeString(value.getType()));
  }
  return type;
}

mlir::FailureOr<llvm::SmallVector<int64_t>> MergeShapes(
    std::optional<mlir::Location> loc, llvm::StringRef op, llvm::StringRef what,
    mlir::RankedTensorType a, mlir::RankedTensorType b) {
  bool ok = a.getRank() == b.getRank();
  llvm::SmallVector<int64_t> merged;
  for (int64_t i = 0; ok && i < a.getRank(); ++i) {
    ok = DimsCompatible(a.getDimSize(i), b.getDimSize(i));
    merged.push_back(MergeDims(a.getDimSize(i), b.getDimSize(i)));
  }
  if (!ok) {
    return ShapeError(loc, op, llvm::Twine(what) + " must have one shape, got " +
                                   TypeString(a) + " and " + TypeString(b));
  }
  return merged;
}

mlir::LogicalResult SameElementType(std::optional<mlir::Location> loc,
                                    llvm::StringRef op, mlir::RankedTensorType a,
                                    mlir::RankedTensorType b) {
  if (a.getElementType() == b.getElementType()) return mlir::success();
  return ShapeError(loc, op, "element types differ: " + TypeString(a) + " and " +
                                 TypeString(b));
}

mlir::LogicalResult VerifyPositiveAttr(mlir::Operation *op, llvm::StringRef name,
                                       const llvm::APFloat &value) {
  if (!(value.convertToDouble() > 0.0)) {
    return op->emitOpError() << name << " must be positive, got " << value.convertToDouble();
  }
  return mlir::success();
}

}  // namespace gpt_sft::compiler::gpt
