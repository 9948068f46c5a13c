//===- rms_norm_kernels.cc - GPU kernels for gpt.rms_norm and its gradient --===//
//
// This file implements the row kernels of the parameter-free RMSNorm over the last dim
// (runtime/kernels/cpu/rms_norm.cc): for a row x of `dim` elements,
//   r = 1 / sqrt(sum(x^2) / dim + eps)            eps the op's (default 2^-23)
//   rms_norm:       y = x r
//   rms_norm_grad:  dx = r dy - b x,  b = r^2 (sum(dy x) r / dim)
// the interpreter's formulas term for term (it sums in double; here f32 tree sums).
// One launch of CeilDiv(rows, R) workgroups of RowsBlock(dim) = {X, R, 1} work-items: X per
// row striding over it (coalesced), R rows per workgroup for short rows (a head dim of 64:
// two rows), the sums by a tree along x in workgroup memory of X * R floats; the gradient
// takes its two sums one after the other through the same memory.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "compiler/lowering/gpu/row_kernels.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;

/// Sum over the work-item's row of f(i) for i = x, x + X, ... < place.end, on every work-item
/// of the row.
Value RowSum(KernelBuilder& k, const RowPlace& place, Value scratch, llvm::function_ref<Value(Value)> f,
             mlir::Type type) {
  Value partial = k.For(k.ThreadId(0), place.end, k.Index(k.block()[0]), {k.Float(type, 0.0)},
                        [&](Value i, mlir::ValueRange acc) { return llvm::SmallVector<Value>{k.FAdd(acc[0], f(i))}; })[0];
  return k.ReduceAlongX(partial, scratch, KernelBuilder::Reduction::kSum);
}

}  // namespace

mlir::LogicalResult EmitRmsNorm(lowering::OpLowering& lowering) {
  mlir::Operation* op = lowering.op();
  const bool grad = llvm::isa<gpt::RmsNormGradOp>(op);
  const double eps = grad ? llvm::cast<gpt::RmsNormGradOp>(op).getEps().convertToDouble()
                          : llvm::cast<gpt::RmsNormOp>(op).getEps().convertToDouble();
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  auto type = llvm::cast<mlir::MemRefType>(lowering.operand(0).getType());
  // The arithmetic type is the tensor's: the buffer may hold bf16 (the kernel builder's seam).
  mlir::Type f = llvm::cast<mlir::ShapedType>(op->getOperand(0).getType()).getElementType();
  if (!f.isF32()) return op->emitOpError("gpt-lower-to-gpu: the RMSNorm kernels run f32, not ") << f;
  const int64_t dim = type.getDimSize(type.getRank() - 1), rows = type.getNumElements() / dim;
  Value x = Flatten(host, loc, lowering.operand(0));
  Value dy = grad ? Flatten(host, loc, lowering.operand(1)) : Value();
  Value out = Flatten(host, loc, lowering.result(0));
  const Dims block = RowsBlock(dim);
  EmitLaunch(host, loc, grad ? "rms_norm_grad" : "rms_norm", {CeilDiv(rows, block[1]), 1, 1}, block,
             {WorkgroupMemRef(host.getContext(), {block[0] * block[1]}, f)}, [&](KernelBuilder& k, mlir::ValueRange wg) {
               const RowPlace place = PlaceInRows(k, rows, dim);
               auto at = [&](Value i) { return k.Add(place.begin, i); };
               auto each = [&](llvm::function_ref<void(Value)> body) {
                 k.For(k.ThreadId(0), place.end, k.Index(block[0]), body);
               };
               Value squares = RowSum(k, place, wg[0], [&](Value i) {
                 Value v = k.Load(x, {at(i)});
                 return k.FMul(v, v);
               }, f);
               Value dimf = k.Float(f, double(dim));
               Value inv = k.FDiv(k.Float(f, 1.0), k.Sqrt(k.FAdd(k.FDiv(squares, dimf), k.Float(f, eps))));
               if (!grad) {
                 each([&](Value i) { k.Store(k.FMul(k.Load(x, {at(i)}), inv), out, {at(i)}); });
                 return;
               }
               Value dot = RowSum(k, place, wg[0], [&](Value i) { return k.FMul(k.Load(dy, {at(i)}), k.Load(x, {at(i)})); }, f);
               Value b = k.FMul(k.FMul(inv, inv), k.FDiv(k.FMul(dot, inv), dimf));
               each([&](Value i) {
                 Value dx = k.FSub(k.FMul(inv, k.Load(dy, {at(i)})), k.FMul(b, k.Load(x, {at(i)})));
                 k.Store(dx, out, {at(i)});
               });
             });
  return mlir::success();
}

}  // namespace gpt_sft::compiler::gpu_lowering
