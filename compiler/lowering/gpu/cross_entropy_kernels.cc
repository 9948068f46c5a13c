//===- cross_entropy_kernels.cc - GPU kernels for the loss and its gradient --===//
//
// This file implements the cross-entropy row kernels, for logits [N, V] and targets [N] i32
// (runtime/kernels/cpu/cross_entropy.cc): the loss is the mean over the counted targets
// (t != ignore_index) of logsumexp(row) - row[t], 0 when none counts; the gradient is
// softmax(row) - onehot(t) times dloss / count, zero on rows not counted. A row's max m and
// sum s of exp(x - m) (its "stats") come from one online pass: each work-item keeps a
// running max and a sum rescaled whenever the max grows, and the row combines them (the max
// along x, then each sum rescaled to it and summed along x). Rows use RowsBlock (row_kernels.h).
//   loss:  1. per row: stats; the row's loss m + log(s) - x[t] and whether it counts into
//             scratch [N] each; the stats into a persistent [N, 2] when the gradient of the
//             same logits follows in the entry point;
//          2. one workgroup of 256 sums both in a fixed tree order and divides.
//   grad:  1. one workgroup of 256 counts the targets: scale = dloss / count into scratch;
//          2. per row: the stats (the loss's, else computed), then
//             dx = exp(x - m) (scale / s), minus scale at the target: the interpreter's terms.
// The softcap-gradient epilogue (compiler/lowering/softcap_epilogue.h, the decision every
// target shares): when it applies, row kernel 2 also multiplies by (1 - (y/cap)^2) and writes
// the softcap_grad's buffer; the logits may be that very buffer here.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>

#include "ir/gpt_ops.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "compiler/lowering/gpu/row_kernels.h"
#include "compiler/lowering/softcap_epilogue.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;
using Predicate = ::mlir::arith::CmpIPredicate;

constexpr int64_t kReduceBlock = 256;

Value ICmp(KernelBuilder& k, Predicate p, Value a, Value b) { return k.b().create<mlir::arith::CmpIOp>(p, a, b); }

/// i1: target `t` (i32) counts: not ignore_index and a column of the row. Targets the
/// runtime let through (valid_range) are either; the bounds also keep stray ones in bounds.
Value Counts(KernelBuilder& k, Value t, int64_t ignore, int64_t V) {
  Value column = k.And(ICmp(k, Predicate::sge, t, k.I32(0)), ICmp(k, Predicate::slt, t, k.I32(static_cast<int32_t>(V))));
  if (ignore < 0 || ignore >= V) return column;
  return k.And(column, ICmp(k, Predicate::ne, t, k.I32(static_cast<int32_t>(ignore))));
}

/// The values the targets argument may hold: the columns and ignore_index.
void RequireTargetRange(lowering::OpLowering& lowering, Value targets, int64_t ignore, int64_t V) {
  lowering.RequireArgumentRange(targets, std::min<int64_t>(ignore, 0), std::max<int64_t>(ignore + 1, V));
}

/// The row's max m and sum of exp(x - m) over its elements, on every work-item of the row
/// (one pass: see the file comment).
std::pair<Value, Value> RowStats(KernelBuilder& k, const RowPlace& place, Value logits, Value scratch, mlir::Type f) {
  Value lowest = k.Float(f, -std::numeric_limits<double>::infinity()), one = k.Float(f, 1.0);
  llvm::SmallVector<Value> running =
      k.For(k.ThreadId(0), place.end, k.Index(k.block()[0]), {lowest, k.Float(f, 0.0)}, [&](Value i, mlir::ValueRange ms) {
        Value x = k.Load(logits, {k.Add(place.begin, i)});
        Value hi = k.FMax(ms[0], x);
        Value e = k.Exp(k.FSub(k.FMin(ms[0], x), hi));  // exp(-|x - m|), 0 for the first element
        Value s = k.Select(k.FGt(x, ms[0]), k.FAdd(k.FMul(ms[1], e), one), k.FAdd(ms[1], e));
        return llvm::SmallVector<Value>{hi, s};
      });
  Value max = k.ReduceAlongX(running[0], scratch, KernelBuilder::Reduction::kMax);
  // A work-item with no elements has max -inf and sum 0: it adds 0.
  Value rescaled = k.FMul(running[1], k.Exp(k.FSub(running[0], max)));
  return {max, k.ReduceAlongX(rescaled, scratch, KernelBuilder::Reduction::kSum)};
}

/// Sum over i < n of values[i] by one workgroup of kReduceBlock, on every work-item.
Value SumOf(KernelBuilder& k, int64_t n, Value scratch, mlir::Type f, llvm::function_ref<Value(Value)> value) {
  Value partial = k.For(k.ThreadId(0), k.Index(n), k.Index(kReduceBlock), {k.Float(f, 0.0)},
                        [&](Value i, mlir::ValueRange acc) { return llvm::SmallVector<Value>{k.FAdd(acc[0], value(i))}; })[0];
  return k.WorkgroupReduce(partial, scratch, KernelBuilder::Reduction::kSum);
}

/// True when the gradient of these very logits is taken later in the entry point.
bool GradientFollows(gpt::CrossEntropyOp ce) {
  for (mlir::Operation* user : ce.getLogits().getUsers()) {
    if (llvm::isa<gpt::CrossEntropyGradOp>(user) && ce->isBeforeInBlock(user)) return true;
  }
  return false;
}

mlir::LogicalResult EmitLoss(lowering::OpLowering& lowering, gpt::CrossEntropyOp ce) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  mlir::MLIRContext* ctx = host.getContext();
  auto type = llvm::cast<mlir::MemRefType>(lowering.BufferOf(ce.getLogits()).getType());
  // The tensor's type: the buffer may hold bf16 (the kernel builder's seam).
  mlir::Type f = llvm::cast<mlir::ShapedType>(ce.getLogits().getType()).getElementType();
  const int64_t N = type.getDimSize(0), V = type.getDimSize(1), ignore = ce.getIgnoreIndex();
  Value logits = Flatten(host, loc, lowering.BufferOf(ce.getLogits()));
  Value targets = lowering.BufferOf(ce.getTargets());
  Value loss = Flatten(host, loc, lowering.result(0));
  RequireTargetRange(lowering, ce.getTargets(), ignore, V);
  Value row_loss = lowering.Scratch(mlir::MemRefType::get({N}, f));
  Value counted = lowering.Scratch(mlir::MemRefType::get({N}, f));
  Value stats = GradientFollows(ce) ? lowering.Persistent(mlir::MemRefType::get({2 * N}, f), ce.getLogits()) : Value();
  const Dims block = RowsBlock(V);
  EmitLaunch(host, loc, "cross_entropy_rows", {CeilDiv(N, block[1]), 1, 1}, block,
             {WorkgroupMemRef(ctx, {block[0] * block[1]}, f)}, [&](KernelBuilder& k, mlir::ValueRange wg) {
               const RowPlace place = PlaceInRows(k, N, V);
               auto [max, sum] = RowStats(k, place, logits, wg[0], f);
               k.If(k.And(k.Eq(k.ThreadId(0), k.Index(0)), place.valid), [&] {
                 Value t = k.Load(targets, {place.row});
                 Value counts = Counts(k, t, ignore, V);
                 Value at = k.Add(place.begin, k.Select(counts, k.IndexFromI32(t), k.Index(0)));
                 Value value = k.FSub(k.FAdd(max, k.Log(sum)), k.Load(logits, {at}));
                 k.Store(k.Select(counts, value, k.Float(f, 0.0)), row_loss, {place.row});
                 k.Store(k.Select(counts, k.Float(f, 1.0), k.Float(f, 0.0)), counted, {place.row});
                 if (stats) {
                   Value two_n = k.Mul(place.row, k.Index(2));
                   k.Store(max, stats, {two_n});
                   k.Store(sum, stats, {k.Add(two_n, k.Index(1))});
                 }
               });
             });
  EmitLaunch(host, loc, "cross_entropy_mean", {1, 1, 1}, {kReduceBlock, 1, 1},
             {WorkgroupMemRef(ctx, {kReduceBlock}, f)}, [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value sum = SumOf(k, N, wg[0], f, [&](Value i) { return k.Load(row_loss, {i}); });
               Value count = SumOf(k, N, wg[0], f, [&](Value i) { return k.Load(counted, {i}); });
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
  mlir::MLIRContext* ctx = host.getContext();
  auto type = llvm::cast<mlir::MemRefType>(lowering.BufferOf(ce.getLogits()).getType());
  // The tensor's type: the buffer may hold bf16 (the kernel builder's seam).
  mlir::Type f = llvm::cast<mlir::ShapedType>(ce.getLogits().getType()).getElementType();
  const int64_t N = type.getDimSize(0), V = type.getDimSize(1), ignore = ce.getIgnoreIndex();
  RequireTargetRange(lowering, ce.getTargets(), ignore, V);
  Value out_buffer = lowering.result(0);
  Value targets = lowering.BufferOf(ce.getTargets());
  Value dloss = lowering.BufferOf(ce.getDloss());
  double cap = 0;
  // Each element is read before the same work-item writes it, and the row's stats are
  // complete by then: the logits may be the very bytes of the output.
  if (std::optional<lowering::SoftcapEpilogue> e = lowering::FuseSoftcapEpilogue(lowering, ce, /*allow_same_bytes=*/true)) {
    cap = e->cap;
    out_buffer = e->out;
    targets = e->targets;
    dloss = e->dloss;
  }
  dloss = Flatten(host, loc, dloss);
  Value logits = Flatten(host, loc, lowering.BufferOf(ce.getLogits()));
  Value out = Flatten(host, loc, out_buffer);
  Value stats = lowering.FindPersistent(ce.getLogits());
  Value scale = lowering.Scratch(mlir::MemRefType::get({1}, f));
  EmitLaunch(host, loc, "cross_entropy_scale", {1, 1, 1}, {kReduceBlock, 1, 1},
             {WorkgroupMemRef(ctx, {kReduceBlock}, f)}, [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value count = SumOf(k, N, wg[0], f, [&](Value i) {
                 return k.Select(Counts(k, k.Load(targets, {i}), ignore, V), k.Float(f, 1.0), k.Float(f, 0.0));
               });
               k.If(k.Eq(k.ThreadId(0), k.Index(0)), [&] {
                 Value has = k.FGt(count, k.Float(f, 0.0));
                 Value value = k.Select(has, k.FDiv(k.Load(dloss, {k.Index(0)}), count), k.Float(f, 0.0));
                 k.Store(value, scale, {k.Index(0)});
               });
             });
  const Dims block = RowsBlock(V);
  const std::string name = std::string(cap != 0 ? "cross_entropy_softcap_grad" : "cross_entropy_grad") +
                           (stats ? "_from_stats" : "");
  // Workgroup memory only for the stats' reductions.
  llvm::SmallVector<mlir::MemRefType> workgroup;
  if (!stats) workgroup.push_back(WorkgroupMemRef(ctx, {block[0] * block[1]}, f));
  EmitLaunch(host, loc, name, {CeilDiv(N, block[1]), 1, 1}, block, workgroup,
             [&](KernelBuilder& k, mlir::ValueRange wg) {
               const RowPlace place = PlaceInRows(k, N, V);
               Value row = k.Min(place.row, k.Index(N - 1));  // per-row reads of padding rows stay in bounds
               Value max, sum;
               if (stats) {
                 max = k.Load(stats, {k.Mul(row, k.Index(2))});
                 sum = k.Load(stats, {k.Add(k.Mul(row, k.Index(2)), k.Index(1))});
               } else {
                 std::tie(max, sum) = RowStats(k, place, logits, wg[0], f);
               }
               Value s = k.Load(scale, {k.Index(0)});
               Value t = k.Load(targets, {row});
               Value counts = Counts(k, t, ignore, V);
               Value factor = k.Select(counts, k.FDiv(s, sum), k.Float(f, 0.0));
               Value target = k.Select(counts, k.IndexFromI32(t), k.Index(V));  // V: no column
               k.For(k.ThreadId(0), place.end, k.Index(block[0]), [&](Value v) {
                 Value at = k.Add(place.begin, v);
                 Value y = k.Load(logits, {at});
                 Value g = k.FMul(k.Exp(k.FSub(y, max)), factor);
                 g = k.Select(k.Eq(v, target), k.FSub(g, s), g);
                 if (cap != 0) {
                   Value r = k.FDiv(y, k.Float(f, cap));
                   g = k.FMul(g, k.FSub(k.Float(f, 1.0), k.FMul(r, r)));
                 }
                 k.Store(g, out, {at});
               });
             });
  return mlir::success();
}

}  // namespace

mlir::LogicalResult EmitCrossEntropy(lowering::OpLowering& lowering) {
  mlir::Operation* op = lowering.op();
  mlir::Type f = llvm::cast<mlir::ShapedType>(op->getOperand(0).getType()).getElementType();
  if (!f.isF32()) return op->emitOpError("gpt-lower-to-gpu: the cross-entropy kernels run f32, not ") << f;
  if (auto ce = llvm::dyn_cast<gpt::CrossEntropyOp>(op)) return EmitLoss(lowering, ce);
  return EmitGrad(lowering, llvm::cast<gpt::CrossEntropyGradOp>(op));
}

}  // namespace gpt_sft::compiler::gpu_lowering
