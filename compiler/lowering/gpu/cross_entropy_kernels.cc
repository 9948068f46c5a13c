//===- cross_entropy_kernels.cc - GPU kernels for the loss and its gradient --===//
//
// This file implements the cross-entropy row kernels (runtime/kernels/cpu/cross_entropy.h:
// mean over the targets that are not -1 of logsumexp(row) - row[target]; the gradient is
// softmax - onehot scaled by dloss / count, zero on ignored rows):
//   loss:  1. a workgroup per row: the row max, then sum exp(x - max) (workgroup reductions),
//             the row's loss and whether it counts, into scratch;
//          2. one workgroup sums both in a fixed tree order and divides.
//   grad:  1. one workgroup counts the targets and stores scale = dloss / count;
//          2. a workgroup per row writes softmax * scale - scale at the target.
// The softcap-gradient epilogue (compiler/lowering/softcap_epilogue.h): when it applies, row
// kernel 2 writes the softcap gradient (1 - (y/cap)^2) directly into the softcap_grad's
// buffer; here the logits may even be that buffer (each element is read before it is written,
// by the same work-item).
//
//===----------------------------------------------------------------------===//

#include "compiler/dialect/gpt_ops.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "compiler/lowering/gpu/row_kernels.h"
#include "compiler/lowering/softcap_epilogue.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <limits>

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;

/// Row max and sum of exp(x - max) of row `n` of `logits` [N, V], on every work-item.
std::pair<Value, Value> RowMaxAndSum(KernelBuilder& k, Value logits, Value base, int64_t V, Value scratch,
                                     mlir::Type f) {
  const int64_t block = k.block()[0];
  Value lowest = k.Float(f, -std::numeric_limits<double>::infinity());
  Value partial_max = k.For(k.ThreadId(0), k.Index(V), k.Index(block), {lowest}, [&](Value i, mlir::ValueRange acc) {
                         return llvm::SmallVector<Value>{k.FMax(acc[0], k.Load(logits, {k.Add(base, i)}))};
                       })[0];
  Value max = k.WorkgroupReduce(partial_max, scratch, KernelBuilder::Reduction::kMax);
  Value partial_sum = k.For(k.ThreadId(0), k.Index(V), k.Index(block), {k.Float(f, 0.0)}, [&](Value i, mlir::ValueRange acc) {
                         return llvm::SmallVector<Value>{k.FAdd(acc[0], k.Exp(k.FSub(k.Load(logits, {k.Add(base, i)}), max)))};
                       })[0];
  return {max, k.WorkgroupReduce(partial_sum, scratch, KernelBuilder::Reduction::kSum)};
}

mlir::LogicalResult EmitLoss(lowering::OpLowering& lowering, gpt::CrossEntropyOp ce) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  auto type = llvm::cast<mlir::MemRefType>(lowering.BufferOf(ce.getLogits()).getType());
  mlir::Type f = type.getElementType();
  const int64_t N = type.getDimSize(0), V = type.getDimSize(1);
  Value logits = Flatten(host, loc, lowering.BufferOf(ce.getLogits()));
  Value targets = lowering.BufferOf(ce.getTargets());
  Value loss = Flatten(host, loc, lowering.result(0));
  lowering.RequireArgumentRange(ce.getTargets(), -1, V);
  Value row_loss = lowering.Scratch(mlir::MemRefType::get({N}, f));
  Value counted = lowering.Scratch(mlir::MemRefType::get({N}, f));
  const int64_t block = RowBlock(V);
  mlir::MLIRContext* ctx = host.getContext();
  EmitLaunch(host, loc, "cross_entropy_rows", {N, 1, 1}, {block, 1, 1}, {WorkgroupMemRef(ctx, {block}, f)},
             [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value n = k.BlockId(0), base = k.Mul(n, k.Index(V));
               auto [max, sum] = RowMaxAndSum(k, logits, base, V, wg[0], f);
               Value t = k.Load(targets, {n});
               Value counts = k.b().create<mlir::arith::CmpIOp>(mlir::arith::CmpIPredicate::sge, t, k.I32(0));
               k.If(k.Eq(k.ThreadId(0), k.Index(0)), [&] {
                 Value safe_t = k.Select(counts, k.IndexFromI32(t), k.Index(0));
                 Value value = k.FSub(k.FAdd(max, k.Log(sum)), k.Load(logits, {k.Add(base, safe_t)}));
                 k.Store(k.Select(counts, value, k.Float(f, 0.0)), row_loss, {n});
                 k.Store(k.Select(counts, k.Float(f, 1.0), k.Float(f, 0.0)), counted, {n});
               });
             });
  const int64_t total_block = 256;
  EmitLaunch(host, loc, "cross_entropy_mean", {1, 1, 1}, {total_block, 1, 1},
             {WorkgroupMemRef(ctx, {total_block}, f)}, [&](KernelBuilder& k, mlir::ValueRange wg) {
               auto sum_of = [&](Value values) {
                 Value partial = k.For(k.ThreadId(0), k.Index(N), k.Index(total_block), {k.Float(f, 0.0)},
                                       [&](Value i, mlir::ValueRange acc) {
                                         return llvm::SmallVector<Value>{k.FAdd(acc[0], k.Load(values, {i}))};
                                       })[0];
                 return k.WorkgroupReduce(partial, wg[0], KernelBuilder::Reduction::kSum);
               };
               Value sum = sum_of(row_loss), count = sum_of(counted);
               k.If(k.Eq(k.ThreadId(0), k.Index(0)), [&] {
                 Value has = k.FGt(count, k.Float(f, 0.0));
                 k.Store(k.Select(has, k.FDiv(sum, count), k.Float(f, 0.0)), loss, {k.Index(0)});
               });
             });
  return mlir::success();
}

mlir::LogicalResult EmitGrad(lowering::OpLowering& lowering, gpt::CrossEntropyGradOp ce) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  auto type = llvm::cast<mlir::MemRefType>(lowering.BufferOf(ce.getLogits()).getType());
  mlir::Type f = type.getElementType();
  const int64_t N = type.getDimSize(0), V = type.getDimSize(1);
  Value logits_buffer = lowering.BufferOf(ce.getLogits());
  Value targets = lowering.BufferOf(ce.getTargets());
  Value dloss_buffer = lowering.BufferOf(ce.getDloss());
  Value out_buffer = lowering.result(0);
  lowering.RequireArgumentRange(ce.getTargets(), -1, V);
  double cap = 0;
  // Each element of a row is read before the same work-item writes it: the same bytes are fine.
  if (auto epilogue = lowering::FuseSoftcapEpilogue(lowering, ce, /*allow_same_bytes=*/true)) {
    cap = epilogue->cap;
    out_buffer = epilogue->out;
    targets = epilogue->targets;
    dloss_buffer = epilogue->dloss;
  }
  Value dloss = Flatten(host, loc, dloss_buffer);
  Value logits = Flatten(host, loc, logits_buffer);
  Value out = Flatten(host, loc, out_buffer);
  Value scale = lowering.Scratch(mlir::MemRefType::get({1}, f));
  mlir::MLIRContext* ctx = host.getContext();
  const int64_t count_block = 256;
  EmitLaunch(host, loc, "cross_entropy_scale", {1, 1, 1}, {count_block, 1, 1},
             {WorkgroupMemRef(ctx, {count_block}, f)}, [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value partial = k.For(k.ThreadId(0), k.Index(N), k.Index(count_block), {k.Float(f, 0.0)},
                                     [&](Value i, mlir::ValueRange acc) {
                                       Value counts = k.b().create<mlir::arith::CmpIOp>(
                                           mlir::arith::CmpIPredicate::sge, k.Load(targets, {i}), k.I32(0));
                                       return llvm::SmallVector<Value>{
                                           k.FAdd(acc[0], k.Select(counts, k.Float(f, 1.0), k.Float(f, 0.0)))};
                                     })[0];
               Value count = k.WorkgroupReduce(partial, wg[0], KernelBuilder::Reduction::kSum);
               k.If(k.Eq(k.ThreadId(0), k.Index(0)), [&] {
                 Value has = k.FGt(count, k.Float(f, 0.0));
                 k.Store(k.Select(has, k.FDiv(k.Load(dloss, {k.Index(0)}), count), k.Float(f, 0.0)), scale,
                         {k.Index(0)});
               });
             });
  const int64_t block = RowBlock(V);
  EmitLaunch(host, loc, cap != 0 ? "cross_entropy_softcap_grad" : "cross_entropy_grad", {N, 1, 1}, {block, 1, 1},
             {WorkgroupMemRef(ctx, {block}, f)}, [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value n = k.BlockId(0), base = k.Mul(n, k.Index(V));
               auto [max, sum] = RowMaxAndSum(k, logits, base, V, wg[0], f);
               Value s = k.Load(scale, {k.Index(0)});
               Value t = k.Load(targets, {n});
               Value counts = k.b().create<mlir::arith::CmpIOp>(mlir::arith::CmpIPredicate::sge, t, k.I32(0));
               Value factor = k.Select(counts, k.FDiv(s, sum), k.Float(f, 0.0));
               Value target = k.Select(counts, k.IndexFromI32(t), k.Index(V));  // V: no column
               k.For(k.ThreadId(0), k.Index(V), k.Index(block), [&](Value v) {
                 Value y = k.Load(logits, {k.Add(base, v)});
                 Value g = k.FMul(k.Exp(k.FSub(y, max)), factor);
                 g = k.Select(k.Eq(v, target), k.FSub(g, s), g);
                 if (cap != 0) {
                   Value r = k.FDiv(y, k.Float(f, cap));
                   g = k.FMul(g, k.FSub(k.Float(f, 1.0), k.FMul(r, r)));
                 }
                 k.Store(g, out, {k.Add(base, v)});
               });
             });
  return mlir::success();
}

}  // namespace

mlir::LogicalResult EmitCrossEntropy(lowering::OpLowering& lowering) {
  mlir::Operation* op = lowering.op();
  mlir::Type f = llvm::cast<mlir::ShapedType>(op->getOperand(0).getType()).getElementType();
  if (!f.isF32()) return op->emitOpError("gpt-lower-to-gpu: the cross-entropy kernels run f32");
  const int64_t ignore = llvm::isa<gpt::CrossEntropyOp>(op) ? llvm::cast<gpt::CrossEntropyOp>(op).getIgnoreIndex()
                                                            : llvm::cast<gpt::CrossEntropyGradOp>(op).getIgnoreIndex();
  if (ignore != -1) {
    return op->emitOpError("gpt-lower-to-gpu: the cross-entropy kernels ignore target -1 only");
  }
  if (auto ce = llvm::dyn_cast<gpt::CrossEntropyOp>(op)) return EmitLoss(lowering, ce);
  return EmitGrad(lowering, llvm::cast<gpt::CrossEntropyGradOp>(op));
}

}  // namespace gpt_sft::compiler::gpu_lowering
