//===- attention_kernels.cc - flash-style attention on GPUs ---------------===//
//
// This file implements EmitAttention: causal self-attention with optional segment ids (a
// query sees key j <= i of its own segment) and GQA (query head h reads kv head h / (H/Hkv)),
// q [B,T,H,D], k and v [B,T,Hkv,D], scale 1/sqrt(D) - runtime/kernels/cpu/attention.h.
// Flash-style, never a [T, T] matrix:
//   forward  a workgroup per (query tile, h, b), a work-item per query row holding q and
//            its output accumulator privately; key/value tiles staged in workgroup memory,
//            an online softmax per tile (tiles above the diagonal skipped); writes the output
//            and the log-sum-exp [B, H, T], kept for the backward (OpLowering::Persistent);
//   backward (FlashAttention-2, scores recomputed from the lse, deterministic: no atomics)
//            1. delta[b, h, i] = dO_i . O_i;
//            2. a workgroup per (key tile, kv head, b), a work-item per key row accumulating
//               dK and dV over every query row and query head of its group;
//            3. a workgroup per (query tile, h, b), a work-item per query row accumulating dQ.
// A backward whose `out` is not the result of the matching forward recomputes the forward
// into scratch first. Masked scores use a large negative number, not -inf, so a row's
// running maximum never makes exp(-inf + inf).
//
//===----------------------------------------------------------------------===//

#include <cmath>

#include "compiler/dialect/gpt_ops.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;

constexpr double kMasked = -1e30;

struct Shape {
  int64_t B, T, H, Hkv, D;
  int64_t rep() const { return H / Hkv; }
};

/// Rows per tile: as many as keep two staged [rows, D] tiles within 32 KiB of workgroup memory.
int64_t TileRows(int64_t D) { return std::max<int64_t>(8, std::min<int64_t>(64, 4096 / D)); }

/// The operands of one attention (forward or backward), as flat buffers.
struct Buffers {
  Value q, k, v, segments;  // segments null: plain causal
};

/// Flat offsets: q/out/dq [B,T,H,D], k/v [B,T,Hkv,D], lse/delta [B,H,T].
Value QIndex(KernelBuilder& k, const Shape& s, Value b, Value t, Value h) {
  return k.Mul(k.Add(k.Mul(k.Add(k.Mul(b, k.Index(s.T)), t), k.Index(s.H)), h), k.Index(s.D));
}
Value KvIndex(KernelBuilder& k, const Shape& s, Value b, Value t, Value g) {
  return k.Mul(k.Add(k.Mul(k.Add(k.Mul(b, k.Index(s.T)), t), k.Index(s.Hkv)), g), k.Index(s.D));
}
Value RowIndex(KernelBuilder& k, const Shape& s, Value b, Value h, Value t) {
  return k.Add(k.Mul(k.Add(k.Mul(b, k.Index(s.H)), h), k.Index(s.T)), t);
}

/// Whether query i sees key j (both < T): causal, same segment.
Value Visible(KernelBuilder& k, const Shape& s, const Buffers& in, Value b, Value i, Value j) {
  Value ok = k.And(k.Le(j, i), k.Lt(i, k.Index(s.T)));
  if (!in.segments) return ok;
  Value row = k.Mul(b, k.Index(s.T));
  Value si = k.Load(in.segments, {k.Add(row, k.Min(i, k.Index(s.T - 1)))});
  Value sj = k.Load(in.segments, {k.Add(row, j)});
  return k.And(ok, k.b().create<mlir::arith::CmpIOp>(mlir::arith::CmpIPredicate::eq, si, sj));
}

/// Copies rows [r0, r0 + rows) of a [.., D] head slice (row r at `base(r)`) into `tile`
/// [rows, D], zeros past T; every work-item of the workgroup takes part.
void StageRows(KernelBuilder& k, Value src, Value tile, Value r0, int64_t rows, int64_t T, int64_t D,
               llvm::function_ref<Value(Value)> base) {
  const int64_t threads = k.threads();
  k.For(k.ThreadId(0), k.Index(rows * D), k.Index(threads), [&](Value e) {
    Value r = k.Div(e, k.Index(D)), d = k.Rem(e, k.Index(D));
    Value row = k.Add(r0, r);
    Value valid = k.Lt(row, k.Index(T));
    Value at = k.Add(base(k.Select(valid, row, k.Index(0))), d);
    k.Store(k.Select(valid, k.Load(src, {at}), k.F32(0.0)), tile, {e});
  });
}

/// dot(a[0..D), b[b_base .. b_base + D)) with a private and b any buffer.
Value Dot(KernelBuilder& k, Value a, Value b, Value b_base, int64_t D) {
  return k.For(k.Index(0), k.Index(D), k.Index(1), {k.F32(0.0)}, [&](Value d, mlir::ValueRange acc) {
    return llvm::SmallVector<Value>{k.Fma(k.Load(a, {d}), k.Load(b, {k.Add(b_base, d)}), acc[0])};
  })[0];
}

/// The forward: out and lse.
void EmitForward(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, const Buffers& in, Value out, Value lse) {
  const int64_t BQ = 64, BK = TileRows(s.D);
  mlir::MLIRContext* ctx = host.getContext();
  mlir::Type f32 = host.getF32Type();
  const double scale = 1.0 / std::sqrt(double(s.D));
  EmitLaunch(host, loc, "attention", {CeilDiv(s.T, BQ), s.H, s.B}, {BQ, 1, 1},
             {WorkgroupMemRef(ctx, {BK * s.D}, f32), WorkgroupMemRef(ctx, {BK * s.D}, f32)},
             [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value ks = wg[0], vs = wg[1];
               Value b = k.BlockId(2), h = k.BlockId(1), g = k.Div(h, k.Index(s.rep()));
               Value i = k.Add(k.Mul(k.BlockId(0), k.Index(BQ)), k.ThreadId(0));
               Value i_safe = k.Min(i, k.Index(s.T - 1));
               Value q = k.PrivateArray(s.D, f32), acc = k.PrivateArray(s.D, f32), p = k.PrivateArray(BK, f32);
               Value q_base = QIndex(k, s, b, i_safe, h);
               k.For(0, s.D, 1, [&](Value d) {
                 k.Store(k.FMul(k.Load(in.q, {k.Add(q_base, d)}), k.F32(scale)), q, {d});
                 k.Store(k.F32(0.0), acc, {d});
               });
               // Key tiles up to this query tile's last row (causal).
               Value tile_end = k.Min(k.Mul(k.Add(k.BlockId(0), k.Index(1)), k.Index(BQ)), k.Index(s.T));
               llvm::SmallVector<Value> ml = k.For(
                   k.Index(0), tile_end, k.Index(BK), {k.F32(kMasked), k.F32(0.0)}, [&](Value j0, mlir::ValueRange state) {
                     k.Barrier();
                     auto kv_base = [&](Value t) { return KvIndex(k, s, b, t, g); };
                     StageRows(k, in.k, ks, j0, BK, s.T, s.D, kv_base);
                     StageRows(k, in.v, vs, j0, BK, s.T, s.D, kv_base);
                     k.Barrier();
                     // Scores of the tile, and its maximum over the visible keys.
                     Value tile_max = k.For(k.Index(0), k.Index(BK), k.Index(1), {k.F32(kMasked)},
                                            [&](Value jj, mlir::ValueRange m) {
                                              Value j = k.Add(j0, jj);
                                              Value seen = k.And(k.Lt(j, k.Index(s.T)), Visible(k, s, in, b, i, j));
                                              Value score = Dot(k, q, ks, k.Mul(jj, k.Index(s.D)), s.D);
                                              score = k.Select(seen, score, k.F32(kMasked));
                                              k.Store(score, p, {jj});
                                              return llvm::SmallVector<Value>{k.FMax(m[0], score)};
                                            })[0];
                     Value m_new = k.FMax(state[0], tile_max);
                     Value correction = k.Exp(k.FSub(state[0], m_new));
                     k.For(0, s.D, 1, [&](Value d) { k.Store(k.FMul(k.Load(acc, {d}), correction), acc, {d}); });
                     Value l = k.For(k.Index(0), k.Index(BK), k.Index(1), {k.FMul(state[1], correction)},
                                     [&](Value jj, mlir::ValueRange sum) {
                                       Value score = k.Load(p, {jj});
                                       Value w = k.Select(k.FGt(score, k.F32(kMasked / 2)), k.Exp(k.FSub(score, m_new)),
                                                          k.F32(0.0));
                                       Value v_base = k.Mul(jj, k.Index(s.D));
                                       k.For(0, s.D, 1, [&](Value d) {
                                         k.Store(k.Fma(w, k.Load(vs, {k.Add(v_base, d)}), k.Load(acc, {d})), acc, {d});
                                       });
                                       return llvm::SmallVector<Value>{k.FAdd(sum[0], w)};
                                     })[0];
                     return llvm::SmallVector<Value>{m_new, l};
                   });
               k.If(k.Lt(i, k.Index(s.T)), [&] {
                 Value inv = k.FDiv(k.F32(1.0), ml[1]);
                 k.For(0, s.D, 1, [&](Value d) { k.Store(k.FMul(k.Load(acc, {d}), inv), out, {k.Add(q_base, d)}); });
                 k.Store(k.FAdd(ml[0], k.Log(ml[1])), lse, {RowIndex(k, s, b, h, i)});
               });
             });
}

/// delta[b, h, i] = dO_i . O_i.
void EmitDelta(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, Value out, Value dout, Value delta) {
  const int64_t n = s.B * s.H * s.T, block = 128;
  EmitLaunch(host, loc, "attention_grad_delta", {CeilDiv(n, block), 1, 1}, {block, 1, 1}, {},
             [&](KernelBuilder& k, mlir::ValueRange) {
               Value r = k.GlobalId();
               k.If(k.Lt(r, k.Index(n)), [&] {
                 Value t = k.Rem(r, k.Index(s.T)), bh = k.Div(r, k.Index(s.T));
                 Value h = k.Rem(bh, k.Index(s.H)), b = k.Div(bh, k.Index(s.H));
                 Value base = QIndex(k, s, b, t, h);
                 Value sum = k.For(k.Index(0), k.Index(s.D), k.Index(1), {k.F32(0.0)}, [&](Value d, mlir::ValueRange a) {
                   Value at = k.Add(base, d);
                   return llvm::SmallVector<Value>{k.Fma(k.Load(dout, {at}), k.Load(out, {at}), a[0])};
                 })[0];
                 k.Store(sum, delta, {r});
               });
             });
}

/// dK and dV: a work-item per key row j of kv head g, over every query row i >= j of the
/// group's query heads.
void EmitKeyValueGrad(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, const Buffers& in, Value dout,
                      Value lse, Value delta, Value dk, Value dv) {
  const int64_t BK = 64, BQ = TileRows(s.D);
  mlir::MLIRContext* ctx = host.getContext();
  mlir::Type f32 = host.getF32Type();
  const double scale = 1.0 / std::sqrt(double(s.D));
  EmitLaunch(host, loc, "attention_grad_kv", {CeilDiv(s.T, BK), s.Hkv, s.B}, {BK, 1, 1},
             {WorkgroupMemRef(ctx, {BQ * s.D}, f32), WorkgroupMemRef(ctx, {BQ * s.D}, f32),
              WorkgroupMemRef(ctx, {BQ}, f32), WorkgroupMemRef(ctx, {BQ}, f32)},
             [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value qs = wg[0], dos = wg[1], lses = wg[2], deltas = wg[3];
               Value b = k.BlockId(2), g = k.BlockId(1);
               Value j = k.Add(k.Mul(k.BlockId(0), k.Index(BK)), k.ThreadId(0));
               Value j_safe = k.Min(j, k.Index(s.T - 1));
               Value kj = k.PrivateArray(s.D, f32), vj = k.PrivateArray(s.D, f32);
               Value dkj = k.PrivateArray(s.D, f32), dvj = k.PrivateArray(s.D, f32);
               Value kv_base = KvIndex(k, s, b, j_safe, g);
               k.For(0, s.D, 1, [&](Value d) {
                 k.Store(k.Load(in.k, {k.Add(kv_base, d)}), kj, {d});
                 k.Store(k.Load(in.v, {k.Add(kv_base, d)}), vj, {d});
                 k.Store(k.F32(0.0), dkj, {d});
                 k.Store(k.F32(0.0), dvj, {d});
               });
               Value first_query = k.Mul(k.BlockId(0), k.Index(BK));  // causal: i >= j's tile start
               first_query = k.Mul(k.Div(first_query, k.Index(BQ)), k.Index(BQ));
               k.For(0, s.rep(), 1, [&](Value r) {
                 Value h = k.Add(k.Mul(g, k.Index(s.rep())), r);
                 k.For(first_query, k.Index(s.T), k.Index(BQ), [&](Value i0) {
                   k.Barrier();
                   StageRows(k, in.q, qs, i0, BQ, s.T, s.D, [&](Value t) { return QIndex(k, s, b, t, h); });
                   StageRows(k, dout, dos, i0, BQ, s.T, s.D, [&](Value t) { return QIndex(k, s, b, t, h); });
                   k.For(k.ThreadId(0), k.Index(BQ), k.Index(BK), [&](Value ii) {
                     Value i = k.Min(k.Add(i0, ii), k.Index(s.T - 1));
                     k.Store(k.Load(lse, {RowIndex(k, s, b, h, i)}), lses, {ii});
                     k.Store(k.Load(delta, {RowIndex(k, s, b, h, i)}), deltas, {ii});
                   });
                   k.Barrier();
                   k.For(0, BQ, 1, [&](Value ii) {
                     Value i = k.Add(i0, ii);
                     Value seen = k.And(k.Lt(j, k.Index(s.T)), Visible(k, s, in, b, i, j));
                     Value row = k.Mul(ii, k.Index(s.D));
                     Value score = k.FMul(Dot(k, kj, qs, row, s.D), k.F32(scale));
                     Value prob = k.Select(seen, k.Exp(k.FSub(score, k.Load(lses, {ii}))), k.F32(0.0));
                     Value dp = Dot(k, vj, dos, row, s.D);
                     Value ds = k.FMul(k.FMul(prob, k.FSub(dp, k.Load(deltas, {ii}))), k.F32(scale));
                     k.For(0, s.D, 1, [&](Value d) {
                       Value at = k.Add(row, d);
                       k.Store(k.Fma(prob, k.Load(dos, {at}), k.Load(dvj, {d})), dvj, {d});
                       k.Store(k.Fma(ds, k.Load(qs, {at}), k.Load(dkj, {d})), dkj, {d});
                     });
                   });
                 });
               });
               k.If(k.Lt(j, k.Index(s.T)), [&] {
                 k.For(0, s.D, 1, [&](Value d) {
                   k.Store(k.Load(dkj, {d}), dk, {k.Add(kv_base, d)});
                   k.Store(k.Load(dvj, {d}), dv, {k.Add(kv_base, d)});
                 });
               });
             });
}

/// dQ: a work-item per query row, over the keys it sees.
void EmitQueryGrad(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, const Buffers& in, Value dout, Value lse,
                   Value delta, Value dq) {
  const int64_t BQ = 64, BK = TileRows(s.D);
  mlir::MLIRContext* ctx = host.getContext();
  mlir::Type f32 = host.getF32Type();
  const double scale = 1.0 / std::sqrt(double(s.D));
  EmitLaunch(host, loc, "attention_grad_q", {CeilDiv(s.T, BQ), s.H, s.B}, {BQ, 1, 1},
             {WorkgroupMemRef(ctx, {BK * s.D}, f32), WorkgroupMemRef(ctx, {BK * s.D}, f32)},
             [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value ks = wg[0], vs = wg[1];
               Value b = k.BlockId(2), h = k.BlockId(1), g = k.Div(h, k.Index(s.rep()));
               Value i = k.Add(k.Mul(k.BlockId(0), k.Index(BQ)), k.ThreadId(0));
               Value i_safe = k.Min(i, k.Index(s.T - 1));
               Value qi = k.PrivateArray(s.D, f32), doi = k.PrivateArray(s.D, f32), dqi = k.PrivateArray(s.D, f32);
               Value q_base = QIndex(k, s, b, i_safe, h);
               k.For(0, s.D, 1, [&](Value d) {
                 k.Store(k.Load(in.q, {k.Add(q_base, d)}), qi, {d});
                 k.Store(k.Load(dout, {k.Add(q_base, d)}), doi, {d});
                 k.Store(k.F32(0.0), dqi, {d});
               });
               Value lse_i = k.Load(lse, {RowIndex(k, s, b, h, i_safe)});
               Value delta_i = k.Load(delta, {RowIndex(k, s, b, h, i_safe)});
               Value tile_end = k.Min(k.Mul(k.Add(k.BlockId(0), k.Index(1)), k.Index(BQ)), k.Index(s.T));
               k.For(k.Index(0), tile_end, k.Index(BK), [&](Value j0) {
                 k.Barrier();
                 auto kv_base = [&](Value t) { return KvIndex(k, s, b, t, g); };
                 StageRows(k, in.k, ks, j0, BK, s.T, s.D, kv_base);
                 StageRows(k, in.v, vs, j0, BK, s.T, s.D, kv_base);
                 k.Barrier();
                 k.For(0, BK, 1, [&](Value jj) {
                   Value j = k.Add(j0, jj);
                   Value seen = k.And(k.Lt(j, k.Index(s.T)), Visible(k, s, in, b, i, j));
                   Value row = k.Mul(jj, k.Index(s.D));
                   Value score = k.FMul(Dot(k, qi, ks, row, s.D), k.F32(scale));
                   Value prob = k.Select(seen, k.Exp(k.FSub(score, lse_i)), k.F32(0.0));
                   Value ds = k.FMul(k.FMul(prob, k.FSub(Dot(k, doi, vs, row, s.D), delta_i)), k.F32(scale));
                   k.For(0, s.D, 1, [&](Value d) {
                     k.Store(k.Fma(ds, k.Load(ks, {k.Add(row, d)}), k.Load(dqi, {d})), dqi, {d});
                   });
                 });
               });
               k.If(k.Lt(i, k.Index(s.T)), [&] {
                 k.For(0, s.D, 1, [&](Value d) { k.Store(k.Load(dqi, {d}), dq, {k.Add(q_base, d)}); });
               });
             });
}

template <typename Op>
mlir::LogicalResult CheckSupported(Op op) {
  if (!op.getCausal() || op.getScale()) {
    return op.emitOpError("gpt-lower-to-gpu: the attention kernels run causal attention at the default scale");
  }
  if (!llvm::cast<mlir::ShapedType>(op.getQ().getType()).getElementType().isF32()) {
    return op.emitOpError("gpt-lower-to-gpu: the attention kernels run f32");
  }
  return mlir::success();
}

Shape ShapeOf(Value q, Value k) {
  auto qt = llvm::cast<mlir::ShapedType>(q.getType());
  auto kt = llvm::cast<mlir::ShapedType>(k.getType());
  return {qt.getDimSize(0), qt.getDimSize(1), qt.getDimSize(2), kt.getDimSize(2), qt.getDimSize(3)};
}

Buffers BuffersOf(lowering::OpLowering& lowering, Value q, Value k, Value v, Value segments) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  return {Flatten(host, loc, lowering.BufferOf(q)), Flatten(host, loc, lowering.BufferOf(k)),
          Flatten(host, loc, lowering.BufferOf(v)), segments ? Flatten(host, loc, lowering.BufferOf(segments)) : Value()};
}

mlir::MemRefType LseType(mlir::OpBuilder& host, const Shape& s) {
  return mlir::MemRefType::get({s.B * s.H * s.T}, host.getF32Type());
}

}  // namespace

mlir::LogicalResult EmitAttention(lowering::OpLowering& lowering) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  if (auto a = llvm::dyn_cast<gpt::AttentionOp>(lowering.op())) {
    if (failed(CheckSupported(a))) return mlir::failure();
    const Shape s = ShapeOf(a.getQ(), a.getK());
    Value lse = lowering.Persistent(LseType(host, s), a.getResult());
    EmitForward(host, loc, s, BuffersOf(lowering, a.getQ(), a.getK(), a.getV(), a.getSegmentIds()),
                Flatten(host, loc, lowering.result(0)), lse);
    return mlir::success();
  }
  auto a = llvm::cast<gpt::AttentionGradOp>(lowering.op());
  if (failed(CheckSupported(a))) return mlir::failure();
  const Shape s = ShapeOf(a.getQ(), a.getK());
  const Buffers in = BuffersOf(lowering, a.getQ(), a.getK(), a.getV(), a.getSegmentIds());
  // The forward's lse when `out` is that forward's result on the same inputs; else recompute.
  Value lse, out = Flatten(host, loc, lowering.BufferOf(a.getOut()));
  if (auto fwd = a.getOut().getDefiningOp<gpt::AttentionOp>()) {
    if (fwd.getQ() == a.getQ() && fwd.getK() == a.getK() && fwd.getV() == a.getV() &&
        fwd.getSegmentIds() == a.getSegmentIds()) {
      lse = lowering.FindPersistent(fwd.getResult());
    }
  }
  if (!lse) {  // only the lse is taken from the recomputed forward: delta reads `out` as given
    lse = lowering.Scratch(LseType(host, s));
    Value recomputed = lowering.Scratch(mlir::MemRefType::get({s.B * s.T * s.H * s.D}, host.getF32Type()));
    EmitForward(host, loc, s, in, recomputed, lse);
  }
  Value dout = Flatten(host, loc, lowering.BufferOf(a.getDout()));
  Value delta = lowering.Scratch(LseType(host, s));
  EmitDelta(host, loc, s, out, dout, delta);
  EmitKeyValueGrad(host, loc, s, in, dout, lse, delta, Flatten(host, loc, lowering.result(1)),
                   Flatten(host, loc, lowering.result(2)));
  EmitQueryGrad(host, loc, s, in, dout, lse, delta, Flatten(host, loc, lowering.result(0)));
  return mlir::success();
}

}  // namespace gpt_sft::compiler::gpu_lowering
