// arith.constant with a DenseElementsAttr of f32, f64 or i32 (splat or not, rank 0
// included): materialised into a fresh buffer each run.
#include <algorithm>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "runtime/interpreter/ops/ops.h"

namespace gpt_sft::runtime::interp {
namespace {

template <typename T>
void Fill(mlir::DenseElementsAttr attr, T* out, int64_t n) {
  if (attr.isSplat()) {
    std::fill(out, out + n, attr.getSplatValue<T>());
    return;
  }
  int64_t i = 0;
  for (T value : attr.getValues<T>()) out[i++] = value;
}

absl::Status Constant(OpContext& ctx) {
  auto op = ctx.As<mlir::arith::ConstantOp>();
  auto attr = llvm::dyn_cast<mlir::DenseElementsAttr>(op.getValue());
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(op.getType());
  if (!attr || !type) return ctx.Unimplemented("only tensor constants with dense elements are interpreted");
  if (!type.hasStaticShape()) return ctx.Error("a constant must have a static shape");
  const Shape shape(type.getShape().begin(), type.getShape().end());
  auto out = ctx.AllocateResult(op.getResult(), shape);
  if (!out.ok()) return out.status();
  switch (out->dtype()) {
    case DType::kF32: Fill(attr, out->data<float>(), out->numel()); break;
    case DType::kF64: Fill(attr, out->data<double>(), out->numel()); break;
    case DType::kI32: Fill(attr, out->data<int32_t>(), out->numel()); break;
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterConstantOps(OpRegistry& registry) { registry.Register("arith.constant", Constant); }

}  // namespace gpt_sft::runtime::interp
