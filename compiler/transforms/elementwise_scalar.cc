//===- elementwise_scalar.cc - one elementwise gpt op as scalar code ------===//
//
// This file implements EmitElementwiseScalar: the arith/math code of add, mul, relu_square,
// relu_square_grad, softcap, softcap_grad and round_bf16 on scalars, shared by every lowering
// of them (gpt-lower-fusions' linalg bodies, the GPU kernels).
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/elementwise_scalar.h"

#include "ir/gpt_ops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace gpt_sft::compiler {

using ::mlir::failure;
using ::mlir::Value;

/// runtime/kernels/cpu/round_bf16.h states the same rounding in C++: bf16 is the top half of
/// an f32, so add 0x7fff plus the kept part's lowest bit (ties to even) and clear the low half;
/// a NaN is quieted first so it stays one. Integer ops rather than arith.truncf to bf16,
/// because SPIR-V for OpenCL has no bf16 type and this way every target runs the same
/// instructions.
Value EmitRoundToBf16(mlir::OpBuilder& b, mlir::Location loc, Value x) {
  mlir::Type i32 = b.getI32Type();
  auto constant = [&](uint32_t v) {
    return b.create<mlir::arith::ConstantOp>(loc, b.getIntegerAttr(i32, static_cast<int32_t>(v))).getResult();
  };
  Value bits = b.create<mlir::arith::BitcastOp>(loc, i32, x);
  Value high_half = constant(0xffff0000u);
  Value magnitude = b.create<mlir::arith::AndIOp>(loc, bits, constant(0x7fffffffu));
  Value is_nan = b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::ugt, magnitude, constant(0x7f800000u));
  Value quiet_nan = b.create<mlir::arith::OrIOp>(loc, bits, constant(0x00400000u));
  Value kept_lsb = b.create<mlir::arith::AndIOp>(
      loc, b.create<mlir::arith::ShRUIOp>(loc, bits, constant(16)), constant(1));
  Value biased = b.create<mlir::arith::AddIOp>(
      loc, b.create<mlir::arith::AddIOp>(loc, bits, constant(0x7fffu)), kept_lsb);
  Value chosen = b.create<mlir::arith::SelectOp>(loc, is_nan, quiet_nan, biased);
  Value rounded = b.create<mlir::arith::AndIOp>(loc, chosen, high_half);
  return b.create<mlir::arith::BitcastOp>(loc, x.getType(), rounded);
}

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
    // round_bf16: nanochat's three bf16 ops, each result rounded.
    const bool bf16 = softcap.getRoundBf16();
    if (bf16 && !t.isF32()) return failure();
    auto r = [&](Value v) { return bf16 ? EmitRoundToBf16(b, loc, v) : v; };
    Value scaled = r(b.create<mlir::arith::DivFOp>(loc, in[0], constant(cap)));
    Value tanh = r(b.create<mlir::math::TanhOp>(loc, scaled));
    return r(b.create<mlir::arith::MulFOp>(loc, constant(cap), tanh).getResult());
  }
  if (llvm::isa<gpt::RoundBf16Op>(op)) {
    if (!t.isF32()) return failure();
    return EmitRoundToBf16(b, loc, in[0]);
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
