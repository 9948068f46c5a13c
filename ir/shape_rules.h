//===- shape_rules.h - helpers the gpt shape rules share ------------------===//
//
// Small pieces every op family's inferReturnTypes and verifier uses: dim
// compatibility with dynamic dims, and error text that names the op and the
// types at fault. Internal to ir/.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_SHAPE_RULES_H_
#define GPT_SFT_IR_SHAPE_RULES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"

namespace gpt_sft::compiler::gpt {

/// True when two dims can be equal at run time: equal, or either dynamic.
bool DimsCompatible(int64_t a, int64_t b);

/// The static one of two compatible dims; dynamic when both are.
int64_t MergeDims(int64_t a, int64_t b);

/// The type as MLIR prints it, e.g. "tensor<4x?xf32>", for error messages.
std::string TypeString(mlir::Type type);

/// Emits "<op>: <message>" at `loc` when there is one; always returns failure.
mlir::LogicalResult ShapeError(std::optional<mlir::Location> loc, llvm::StringRef op,
                               const llvm::Twine &message);

/// The value's type as a ranked tensor, or null after an error naming `op`
/// and `what` (the operand's role). Shape rules run before the type
/// constraints are verified, so they must not assume them.
mlir::RankedTensorType RankedOrError(std::optional<mlir::Location> loc,
                                     llvm::StringRef op, llvm::StringRef what,
                                     mlir::Value value);

/// The dims of `a` and `b` merged when they have one rank and compatible dims
/// (the element types are not compared); failure after an error naming both.
mlir::FailureOr<llvm::SmallVector<int64_t>> MergeShapes(
    std::optional<mlir::Location> loc, llvm::StringRef op, llvm::StringRef what,
    mlir::RankedTensorType a, mlir::RankedTensorType b);

/// Fails with an error unless `a` and `b` share the element type.
mlir::LogicalResult SameElementType(std::optional<mlir::Location> loc,
                                    llvm::StringRef op, mlir::RankedTensorType a,
                                    mlir::RankedTensorType b);

/// The verifier of a float attribute that must be > 0 (eps, base, cap, scale):
/// "<name> must be positive, got <value>" on `op`.
mlir::LogicalResult VerifyPositiveAttr(mlir::Operation *op, llvm::StringRef name,
                                       const llvm::APFloat &value);

}  // namespace gpt_sft::compiler::gpt

#endif  // GPT_SFT_IR_SHAPE_RULES_H_
