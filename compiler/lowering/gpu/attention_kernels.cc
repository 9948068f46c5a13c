//===- attention_kernels.cc - flash-style attention on GPUs ---------------===//
//
// This file implements EmitAttention: gpt.attention and gpt.attention_grad as the
// interpreter computes them (runtime/kernels/cpu/attention.h): causal, optional segment ids
// (query i sees key j iff j <= i and seg[b, j] == seg[b, i]: packed rows are
// document-causal), GQA (query head h reads kv head h / (H / Hkv)), q [B,T,H,D],
// k and v [B,T,Hkv,D], scale 1/sqrt(D), lse[b, h, i] = log sum_j exp(scale q_i . k_j).
// Never a [T, T] matrix:
//
//   forward (here)  one kernel, grid (ceil(T / 64), H, B), 64 work-items, one query row
//                   each (q and its output accumulator private). Key and value tiles of
//                   StagedRows(D) rows are staged in workgroup memory; per tile a work-item
//                   scores the keys it sees (causal bound: none above the diagonal), then
//                   folds them into its running max m and sum l (online softmax):
//                     m' = max(m, max_j s_j); acc = acc e^(m - m') + sum_j e^(s_j - m') v_j;
//                     l = l e^(m - m') + sum_j e^(s_j - m').
//                   Writes out = acc / l and lse = m + log l, the latter into a buffer kept
//                   for the whole entry point (OpLowering::Persistent under the op's result).
//   backward        attention_grad_kernels.cc (FlashAttention-2: delta, dk/dv, dq).
//
// Key tiles past the query tile are not visited; with segment ids a tile whose id range
// cannot meet the query tile's is skipped whole (attention_tiles.h).
//
//===----------------------------------------------------------------------===//

#include "ir/autocast.h"
#include "ir/gpt_ops.h"
#include "compiler/lowering/gpu/attention_grad_kernels.h"
#include "compiler/lowering/gpu/attention_tiles.h"
#include "compiler/lowering/gpu/flash_attention.h"
#include "compiler/lowering/gpu/flash_attention_tiles.h"
#include "compiler/lowering/gpu/gpu_kernels.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using attention::kMasked;
using attention::kOwnedRows;
using ::mlir::Value;

/// The online softmax over the key tiles of one query row (see the file comment).
void EmitForwardBody(KernelBuilder& k, const attention::Shape& s, const attention::Inputs& in, Value out, Value lse,
                     mlir::ValueRange workgroup) {
  const attention::KeyTiles wg = attention::KeyTilesOf(s, workgroup);
  const attention::QueryTile qt = attention::OpenQueryTile(k, s, in, wg);
  Value q_base = attention::QRow(k, s, qt.b, qt.i_safe, qt.h);
  Value q = attention::LoadRow(k, in.q, q_base, s.D, s.scale());  // scores come out scaled
  Value acc = attention::ZeroRow(k, s.D);
  Value scores = k.PrivateArray(wg.rows, k.b().getF32Type());
  llvm::SmallVector<Value> m_l = attention::ForEachKeyTile(
      k, s, in, wg, qt, {k.F32(kMasked), k.F32(0.0)}, [&](Value j0, mlir::ValueRange running) {
        Value n = attention::CausalKeys(k, qt, j0, wg.rows), trips = attention::AtLeastOnce(k, n);
        // The tile's scores (kMasked for keys it does not see) and their maximum.
        Value tile_max = k.For(k.Index(0), trips, k.Index(1), {k.F32(kMasked)}, [&](Value jj, mlir::ValueRange mx) {
          Value seen = k.Lt(jj, n);
          if (in.segments) {
            seen = k.And(seen, attention::SameSegment(k, k.Load(wg.key_segments, {jj}), qt.segment));
          }
          Value dot = attention::Dot(k, q, wg.keys, k.Mul(jj, k.Index(s.D)), s.D);
          Value score = k.Select(seen, dot, k.F32(kMasked));
          k.Store(score, scores, {jj});
          return llvm::SmallVector<Value>{k.FMax(mx[0], score)};
        })[0];
        Value m_new = k.FMax(running[0], tile_max);
        Value correction = k.Exp(k.FSub(running[0], m_new));  // 0 on the first tile it sees
        k.For(0, s.D, 1, [&](Value d) { k.Store(k.FMul(k.Load(acc, {d}), correction), acc, {d}); });
        Value l =
            k.For(k.Index(0), trips, k.Index(1), {k.FMul(running[1], correction)}, [&](Value jj, mlir::ValueRange sum) {
              Value score = k.Load(scores, {jj});
              Value seen = k.FGt(score, k.F32(kMasked / 2));
              Value w = k.Select(seen, k.Exp(k.FSub(score, m_new)), k.F32(0.0));
              k.If(seen, [&] { attention::Axpy(k, w, wg.values, k.Mul(jj, k.Index(s.D)), acc, s.D); });
              return llvm::SmallVector<Value>{k.FAdd(sum[0], w)};
            })[0];
        return llvm::SmallVector<Value>{m_new, l};
      });
  // Every query sees itself, so l >= 1 on a valid row.
  k.If(qt.valid, [&] {
    attention::StoreRow(k, acc, out, q_base, s.D, k.FDiv(k.F32(1.0), m_l[1]));
    k.Store(k.FAdd(m_l[0], k.Log(m_l[1])), lse, {attention::LseAt(k, s, qt.b, qt.h, qt.i)});
  });
}

/// The forward's launch: out [B*T*H*D] and lse [B*H*T] from `in`.
void EmitForward(mlir::OpBuilder& host, mlir::Location loc, const attention::Shape& s, const attention::Inputs& in,
                 Value out, Value lse) {
  const bool segmented = static_cast<bool>(in.segments);
  EmitLaunch(host, loc, segmented ? "attention_segments" : "attention", {CeilDiv(s.T, kOwnedRows), s.H, s.B},
             {kOwnedRows, 1, 1}, attention::KeyTileTypes(host.getContext(), s, segmented),
             [&](KernelBuilder& k, mlir::ValueRange wg) { EmitForwardBody(k, s, in, out, lse, wg); });
}

/// The kernels' refusals: what the interpreter's compiled path runs (op_launches.cc), f32.
/// (Segment ids are i32 by the op's definition.)
template <typename Op>
mlir::LogicalResult CheckSupported(Op op, const attention::Shape& s) {
  // An explicit scale is accepted only when it is the default the kernels bake in.
  if (!op.getCausal() || (op.getScale() && op.getScale()->convertToDouble() != s.scale())) {
    return op.emitOpError(
        "gpt-lower-to-gpu: the attention kernels run causal attention at the default scale "
        "1/sqrt(D)");
  }
  for (Value v : {op.getQ(), op.getK(), op.getV()}) {
    auto type = llvm::cast<mlir::ShapedType>(v.getType());
    if (!type.getElementType().isF32()) {
      return op.emitOpError("gpt-lower-to-gpu: the attention kernels run f32 only, got ") << type;
    }
  }
  return mlir::success();
}

attention::Shape ShapeOf(Value q, Value k) {
  auto qt = llvm::cast<mlir::ShapedType>(q.getType());
  auto kt = llvm::cast<mlir::ShapedType>(k.getType());
  return {qt.getDimSize(0), qt.getDimSize(1), qt.getDimSize(2), kt.getDimSize(2), qt.getDimSize(3)};
}

template <typename Op>
attention::Inputs InputsOf(lowering::OpLowering& lowering, Op op) {
  mlir::OpBuilder& host = lowering.builder();
  auto flat = [&](Value v) { return v ? Flatten(host, lowering.loc(), lowering.BufferOf(v)) : Value(); };
  return {flat(op.getQ()), flat(op.getK()), flat(op.getV()), flat(op.getSegmentIds())};
}

/// lse [B, H, T] f32.
mlir::MemRefType LseType(mlir::OpBuilder& host, const attention::Shape& s) {
  return mlir::MemRefType::get({s.B, s.H, s.T}, host.getF32Type());
}

/// The lse the forward of `grad`'s `out` kept, when that forward ran on the same operands
/// (the interpreter's rule: LseForGrad in runtime/interpreter/ops/attention_ops.cc); null
/// otherwise.
Value ForwardLse(lowering::OpLowering& lowering, gpt::AttentionGradOp grad) {
  auto fwd = grad.getOut().getDefiningOp<gpt::AttentionOp>();
  if (!fwd || fwd.getQ() != grad.getQ() || fwd.getK() != grad.getK() || fwd.getV() != grad.getV() ||
      fwd.getSegmentIds() != grad.getSegmentIds() || fwd.getCausal() != grad.getCausal() ||
      fwd.getScaleAttr() != grad.getScaleAttr()) {
    return nullptr;
  }
  return lowering.FindPersistent(fwd.getResult());
}

/// Whether `op` runs on the warp-tile kernels (flash_attention.h): under bf16 autocast its
/// operands are bf16 values, so bf16 tile products with f32 sums are the interpreter's own
/// arithmetic. f32 attention keeps the f32 kernels: its products on bf16 tiles would round
/// its operands, which nothing in an f32 step does.
bool OnWarpTiles(mlir::Operation* op, const attention::Shape& s) {
  return UnderBf16Autocast(op) && attention::FlashSupports(s);
}

/// The forward of `op`'s kind into out and lse.
void EmitForwardOf(mlir::Operation* op, mlir::OpBuilder& host, mlir::Location loc, const attention::Shape& s,
                   const attention::Inputs& in, Value out, Value lse, const GpuLoweringOptions& options) {
  if (OnWarpTiles(op, s)) return attention::EmitFlashForward(host, loc, s, in, out, lse, options.mma);
  EmitForward(host, loc, s, in, out, lse);
}

mlir::LogicalResult EmitAttentionForward(lowering::OpLowering& lowering, gpt::AttentionOp op,
                                         const GpuLoweringOptions& options) {
  const attention::Shape s = ShapeOf(op.getQ(), op.getK());
  if (failed(CheckSupported(op, s))) return mlir::failure();
  mlir::OpBuilder& host = lowering.builder();
  const attention::Inputs in = InputsOf(lowering, op);
  Value lse = Flatten(host, lowering.loc(), lowering.Persistent(LseType(host, s), op.getResult()));
  EmitForwardOf(op, host, lowering.loc(), s, in, Flatten(host, lowering.loc(), lowering.result(0)), lse, options);
  return mlir::success();
}

mlir::LogicalResult EmitAttentionBackward(lowering::OpLowering& lowering, gpt::AttentionGradOp op,
                                          const GpuLoweringOptions& options) {
  const attention::Shape s = ShapeOf(op.getQ(), op.getK());
  if (failed(CheckSupported(op, s))) return mlir::failure();
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  const attention::Inputs in = InputsOf(lowering, op);
  Value lse = ForwardLse(lowering, op);
  if (!lse) {
    // Recompute the forward for its lse only: delta reads `out` as given (as the interpreter).
    Value recomputed = lowering.Scratch(mlir::MemRefType::get({s.B * s.T * s.H * s.D}, host.getF32Type()));
    lse = lowering.Scratch(LseType(host, s));
    EmitForwardOf(op, host, loc, s, in, recomputed, Flatten(host, loc, lse), options);
  }
  auto flat = [&](Value v) { return Flatten(host, loc, v); };
  const attention::GradBuffers grads{flat(lowering.BufferOf(op.getOut())),
                                     flat(lowering.BufferOf(op.getDout())),
                                     flat(lse),
                                     flat(lowering.Scratch(LseType(host, s))),
                                     flat(lowering.result(0)),
                                     flat(lowering.result(1)),
                                     flat(lowering.result(2))};
  if (OnWarpTiles(op, s)) {
    attention::EmitFlashBackward(host, loc, s, in, grads, options.mma);
  } else {
    attention::EmitBackward(host, loc, s, in, grads);
  }
  return mlir::success();
}

}  // namespace

mlir::LogicalResult EmitAttention(lowering::OpLowering& lowering, const GpuLoweringOptions& options) {
  if (auto op = llvm::dyn_cast<gpt::AttentionOp>(lowering.op())) return EmitAttentionForward(lowering, op, options);
  if (auto op = llvm::dyn_cast<gpt::AttentionGradOp>(lowering.op())) {
    return EmitAttentionBackward(lowering, op, options);
  }
  return lowering.op()->emitOpError("gpt-lower-to-gpu: not an attention op");
}

}  // namespace gpt_sft::compiler::gpu_lowering
