//===- rms_norm_kernels.cc - GPU kernels for gpt.rms_norm and its gradient --===//
//
// This file implements the row kernels of the parameter-free RMSNorm over the last dim,
// y = x / sqrt(mean(x^2) + eps), eps the op's (nanochat: 2^-23; runtime/kernels/cpu/rms_norm.h):
// one workgroup per row, each work-item striding over the row, the sums combined by a
// workgroup tree reduction. The gradient, dx = r dy - r^3 mean(dy x) x, takes two sums
// (x.x and dy.x) through the same workgroup memory, one after the other.
//
//===----------------------------------------------------------------------===//

#include "compiler/dialect/gpt_ops.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "compiler/lowering/gpu/row_kernels.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;

/// Sum over the row of f(i) for i = tid, tid + block, ... < dim; the result on every work-item.
Value RowSum(KernelBuilder& k, Value scratch, int64_t dim, llvm::function_ref<Value(Value)> f, mlir::Type type) {
  Value partial = k.For(k.ThreadId(0), k.Index(dim), k.Index(k.block()[0]), {k.Float(type, 0.0)},
                        [&](Value i, mlir::ValueRange acc) { return llvm::SmallVector<Value>{k.FAdd(acc[0], f(i))}; })[0];
  return k.WorkgroupReduce(partial, scratch, KernelBuilder::Reduction::kSum);
}

}  // namespace

int64_t RowBlock(int64_t dim) {
  int64_t block = 32;
  while (block < dim && block < 256) block *= 2;
  return block;
}

mlir::LogicalResult EmitRmsNorm(lowering::OpLowering& lowering) {
  mlir::Operation* op = lowering.op();
  const bool grad = llvm::isa<gpt::RmsNormGradOp>(op);
  const double eps = grad ? llvm::cast<gpt::RmsNormGradOp>(op).getEps().convertToDouble()
                          : llvm::cast<gpt::RmsNormOp>(op).getEps().convertToDouble();
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  auto type = llvm::cast<mlir::MemRefType>(lowering.operand(0).getType());
  mlir::Type f = type.getElementType();
  if (!f.isF32()) return op->emitOpError("gpt-lower-to-gpu: the RMSNorm kernels run f32");
  const int64_t dim = type.getDimSize(type.getRank() - 1), rows = type.getNumElements() / dim;
  Value x = Flatten(host, loc, lowering.operand(0));
  Value dy = grad ? Flatten(host, loc, lowering.operand(1)) : Value();
  Value out = Flatten(host, loc, lowering.result(0));
  const int64_t block = RowBlock(dim);
  EmitLaunch(host, loc, grad ? "rms_norm_grad" : "rms_norm", {rows, 1, 1}, {block, 1, 1},
             {WorkgroupMemRef(host.getContext(), {block}, f)}, [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value base = k.Mul(k.BlockId(0), k.Index(dim));
               auto at = [&](Value i) { return k.Add(base, i); };
               Value squares = RowSum(k, wg[0], dim, [&](Value i) {
                 Value v = k.Load(x, {at(i)});
                 return k.FMul(v, v);
               }, f);
               Value dimf = k.Float(f, double(dim));
               Value inv = k.FDiv(k.Float(f, 1.0), k.Sqrt(k.FAdd(k.FDiv(squares, dimf), k.Float(f, eps))));
               if (!grad) {
                 k.For(k.ThreadId(0), k.Index(dim), k.Index(block),
                       [&](Value i) { k.Store(k.FMul(k.Load(x, {at(i)}), inv), out, {at(i)}); });
                 return;
               }
               Value dot = RowSum(k, wg[0], dim, [&](Value i) { return k.FMul(k.Load(dy, {at(i)}), k.Load(x, {at(i)})); }, f);
               // dx = a dy - b x, a = r, b = r^2 (dy.x r / dim).
               Value b = k.FMul(k.FMul(inv, inv), k.FDiv(k.FMul(dot, inv), dimf));
               k.For(k.ThreadId(0), k.Index(dim), k.Index(block), [&](Value i) {
                 Value dx = k.FSub(k.FMul(inv, k.Load(dy, {at(i)})), k.FMul(b, k.Load(x, {at(i)})));
                 k.Store(dx, out, {at(i)});
               });
             });
  return mlir::success();
}

}  // namespace gpt_sft::compiler::gpu_lowering
