//===- elementwise_scalar.cc - one elementwise gpt op as scalar code ------===//
//
// This file implements EmitElementwiseScalar: the arith/math code of add, mul, relu_square,
// relu_square_grad, softcap and softcap_grad on scalars, shared by every lowering of them
// (gpt-lower-fusions' linalg bodies, the GPU kernels).
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/elementwise_scalar.h"

#include "compiler/dialect/gpt_ops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace gpt_sft::compiler {

using ::mlir::failure;
using ::mlir::Value;

mlir::FailureOr<Value> EmitElementwiseScalar(mlir::OpBuilder& b, mlir::Location loc, mlir::Operation* op,
                                             llvm::ArrayRef<Value> in) {
  mlir::Type t = in[0].getType();
  auto constant = [&](double v) { return b.create<mlir::arith::ConstantOp>(loc, b.getFloatAttr(t, v)).getResult(); };
  auto relu = [&](Value x) { return b.create<mlir::arith::MaximumFOp>(loc, x, constant(0.0)).getResult(); };
  if (llvm::isa<gpt::AddOp>(op)) return b.create<mlir::arith::AddFOp>(loc, in[0], in[1]).getResult();
  if (llvm::isa<gpt::MulOp>(op)) return b.create<mlir::arith::MulFOp>(loc, in[0], in[1]).getResult();
  if (llvm::isa<gpt::ReluSquareOp>(op)) {
    Value r = relu(in[0]);
    return b.create<mlir::arith::MulFOp>(loc, r, r).getResult();
  }
  if (llvm::isa<gpt::ReluSquareGradOp>(op)) {
    Value twice = b.create<mlir::arith::MulFOp>(loc, constant(2.0), relu(in[0]));
    return b.create<mlir::arith::MulFOp>(loc, twice, in[1]).getResult();
  }
  if (auto softcap = llvm::dyn_cast<gpt::SoftcapOp>(op)) {
    const double cap = softcap.getCap().convertToDouble();
    Value scaled = b.create<mlir::arith::DivFOp>(loc, in[0], constant(cap));
    Value tanh = b.create<mlir::math::TanhOp>(loc, scaled);
    return b.create<mlir::arith::MulFOp>(loc, constant(cap), tanh).getResult();
  }
  if (auto grad = llvm::dyn_cast<gpt::SoftcapGradOp>(op)) {
    const double cap = grad.getCap().convertToDouble();
    Value ratio = b.create<mlir::arith::DivFOp>(loc, in[0], constant(cap));
    Value square = b.create<mlir::arith::MulFOp>(loc, ratio, ratio);
    Value slope = b.create<mlir::arith::SubFOp>(loc, constant(1.0), square);
    return b.create<mlir::arith::MulFOp>(loc, slope, in[1]).getResult();
  }
  return failure();
}

}  // namespace gpt_sft::compiler
