//===- attention_grad_kernels.cc - the attention backward on GPUs ---------===//
//
// This file implements the backward of flash-style attention, FlashAttention-2 style: the
// probabilities are recomputed from the forward's lse, never stored, and every gradient
// element is summed by one work-item in a fixed order (deterministic, no atomics).
// Per visible pair (i, j) of one head (s_ij = scale q_i . k_j):
//   P_ij = exp(s_ij - lse_i),  dP_ij = dO_i . v_j,  dS_ij = P_ij (dP_ij - delta_i) scale,
//   dv_j += P_ij dO_i,  dk_j += dS_ij q_i,  dq_i += dS_ij k_j,   delta_i = dO_i . O_i.
//
//   delta   grid (ceil(B T H / 128)), a work-item per row of out/dout in memory order.
//   dk, dv  grid (ceil(T / 64), Hkv, B), 64 work-items, one key row j each (k_j, v_j and
//           its dk, dv private). Query tiles from j's tile on (causal), and for each the
//           rep query heads sharing kv head g: q, dout rows, lse and delta staged in
//           workgroup memory; the work-item visits the queries i >= j of the tile.
//   dq      grid (ceil(T / 64), H, B), 64 work-items, one query row i each (q_i, dO_i and
//           dq_i private), over the key tiles the forward visits, staged as there.
// With segment ids, tile pairs whose id ranges cannot meet are skipped whole.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/attention_grad_kernels.h"

namespace gpt_sft::compiler::gpu_lowering::attention {
namespace {

using ::mlir::Value;

/// delta[b, h, t] = dout[b, t, h, :] . out[b, t, h, :].
void EmitDelta(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, const GradBuffers& g) {
  const int64_t rows = s.B * s.T * s.H, block = 128;
  EmitLaunch(host, loc, "attention_grad_delta", {CeilDiv(rows, block), 1, 1}, {block, 1, 1}, {},
             [&](KernelBuilder& k, mlir::ValueRange) {
               Value r = k.GlobalId();  // (b * T + t) * H + h
               k.If(k.Lt(r, k.Index(rows)), [&] {
                 Value base = k.Mul(r, k.Index(s.D));
                 Value dot =
                     k.For(k.Index(0), k.Index(s.D), k.Index(1), {k.F32(0.0)}, [&](Value d, mlir::ValueRange a) {
                       Value at = k.Add(base, d);
                       return llvm::SmallVector<Value>{k.Fma(k.Load(g.dout, {at}), k.Load(g.out, {at}), a[0])};
                     })[0];
                 Value bt = k.Div(r, k.Index(s.H));
                 Value b = k.Div(bt, k.Index(s.T)), t = k.Rem(bt, k.Index(s.T)), h = k.Rem(r, k.Index(s.H));
                 k.Store(dot, g.delta, {LseAt(k, s, b, h, t)});
               });
             });
}

/// Query rows per staged tile of the dk/dv kernel: q and dout tiles, an lse, a delta and an
/// id per row, and the key tile's ids.
int64_t QueryTileRows(const Shape& s) { return StagedRows(s.D, 3 * sizeof(float), kOwnedRows * sizeof(int32_t)); }

/// The dk/dv kernel's workgroup memory: q, dout tiles [rows * D], lse, delta [rows]; with
/// segment ids, the query tile's ids [rows] and the key tile's [kOwnedRows].
llvm::SmallVector<mlir::MemRefType> KeyValueGradTypes(mlir::MLIRContext* context, const Shape& s, bool segmented) {
  const int64_t rows = QueryTileRows(s);
  auto f32 = mlir::Float32Type::get(context);
  auto i32 = mlir::IntegerType::get(context, 32);
  llvm::SmallVector<mlir::MemRefType> types{
      WorkgroupMemRef(context, {rows * s.D}, f32), WorkgroupMemRef(context, {rows * s.D}, f32),
      WorkgroupMemRef(context, {rows}, f32), WorkgroupMemRef(context, {rows}, f32)};
  if (segmented) {
    types.push_back(WorkgroupMemRef(context, {rows}, i32));
    types.push_back(WorkgroupMemRef(context, {kOwnedRows}, i32));
  }
  return types;
}

/// One key row per work-item; see the file comment.
void EmitKeyValueGradBody(KernelBuilder& k, const Shape& s, const Inputs& in, const GradBuffers& g,
                          mlir::ValueRange wg) {
  const int64_t rows = QueryTileRows(s);
  Value qs = wg[0], dos = wg[1], lses = wg[2], deltas = wg[3];
  Value b = k.BlockId(2), kv = k.BlockId(1);
  Value j0 = k.Mul(k.BlockId(0), k.Index(kOwnedRows));
  Value j = k.Add(j0, k.ThreadId(0));
  Value valid = k.Lt(j, k.Index(s.T));
  Value kv_base = KvRow(k, s, b, k.Min(j, k.Index(s.T - 1)), kv);
  Value kj = LoadRow(k, in.k, kv_base, s.D), vj = LoadRow(k, in.v, kv_base, s.D);
  Value dk = ZeroRow(k, s.D), dv = ZeroRow(k, s.D);
  Value seg_row = k.Mul(b, k.Index(s.T));
  Value segment;
  std::pair<Value, Value> key_range;
  if (in.segments) {
    segment = k.Load(in.segments, {k.Add(seg_row, k.Min(j, k.Index(s.T - 1)))});
    Value n = k.Min(k.Index(kOwnedRows), k.Sub(k.Index(s.T), j0));
    StageVector(k, in.segments, wg[5], k.Add(seg_row, j0), n);
    k.Barrier();
    key_range = SegmentRange(k, wg[5], n);
  }
  // Query tiles from the one holding j0 (causal: no query before it sees these keys).
  Value first = k.Mul(k.Div(j0, k.Index(rows)), k.Index(rows));
  k.For(first, k.Index(s.T), k.Index(rows), [&](Value i0) {
    Value nq = k.Min(k.Index(rows), k.Sub(k.Index(s.T), i0));
    auto heads = [&] {
      k.For(0, s.rep(), 1, [&](Value r) {
        Value h = k.Add(k.Mul(kv, k.Index(s.rep())), r);
        k.Barrier();  // every reader of the previous tile is done
        auto q_row = [&](Value t) { return QRow(k, s, b, t, h); };
        StageRows(k, in.q, qs, i0, nq, s.D, q_row);
        StageRows(k, g.dout, dos, i0, nq, s.D, q_row);
        StageVector(k, g.lse, lses, LseAt(k, s, b, h, i0), nq);
        StageVector(k, g.delta, deltas, LseAt(k, s, b, h, i0), nq);
        k.Barrier();
        // The queries i >= j of the tile (none for a padding row), at least one iteration.
        Value lo = k.Select(valid, k.Select(k.Lt(i0, j), k.Sub(j, i0), k.Index(0)), nq);
        Value first_ii = k.Min(lo, k.Sub(nq, k.Index(1)));
        k.For(first_ii, nq, k.Index(1), [&](Value ii) {
          auto pair = [&] {
            Value row = k.Mul(ii, k.Index(s.D));
            Value score = k.FMul(Dot(k, kj, qs, row, s.D), k.F32(s.scale()));
            Value p = k.Exp(k.FSub(score, k.Load(lses, {ii})));
            Value dp = Dot(k, vj, dos, row, s.D);
            Value ds = k.FMul(k.FMul(p, k.FSub(dp, k.Load(deltas, {ii}))), k.F32(s.scale()));
            Axpy(k, p, dos, row, dv, s.D);
            Axpy(k, ds, qs, row, dk, s.D);
          };
          Value seen = k.Le(lo, ii);
          if (in.segments) seen = k.And(seen, SameSegment(k, k.Load(wg[4], {ii}), segment));
          k.If(seen, pair);
        });
      });
    };
    if (!in.segments) return heads();
    k.Barrier();  // every reader of the previous tile's ids is done
    StageVector(k, in.segments, wg[4], k.Add(seg_row, i0), nq);
    k.Barrier();
    k.If(RangesMeet(k, key_range, SegmentRange(k, wg[4], nq)), heads);
  });
  k.If(valid, [&] {
    StoreRow(k, dk, g.dk, kv_base, s.D);
    StoreRow(k, dv, g.dv, kv_base, s.D);
  });
}

/// One query row per work-item over the key tiles it sees; see the file comment.
void EmitQueryGradBody(KernelBuilder& k, const Shape& s, const Inputs& in, const GradBuffers& g,
                       mlir::ValueRange workgroup) {
  const KeyTiles wg = KeyTilesOf(s, workgroup);
  const QueryTile qt = OpenQueryTile(k, s, in, wg);
  Value q_base = QRow(k, s, qt.b, qt.i_safe, qt.h);
  Value qi = LoadRow(k, in.q, q_base, s.D), doi = LoadRow(k, g.dout, q_base, s.D);
  Value dq = ZeroRow(k, s.D);
  Value lse = k.Load(g.lse, {LseAt(k, s, qt.b, qt.h, qt.i_safe)});
  Value delta = k.Load(g.delta, {LseAt(k, s, qt.b, qt.h, qt.i_safe)});
  ForEachKeyTile(k, s, in, wg, qt, {}, [&](Value j0, mlir::ValueRange) {
    Value n = CausalKeys(k, qt, j0, wg.rows);
    k.For(k.Index(0), AtLeastOnce(k, n), k.Index(1), [&](Value jj) {
      auto pair = [&] {
        Value row = k.Mul(jj, k.Index(s.D));
        Value score = k.FMul(Dot(k, qi, wg.keys, row, s.D), k.F32(s.scale()));
        Value p = k.Exp(k.FSub(score, lse));
        Value ds = k.FMul(k.FMul(p, k.FSub(Dot(k, doi, wg.values, row, s.D), delta)), k.F32(s.scale()));
        Axpy(k, ds, wg.keys, row, dq, s.D);
      };
      Value seen = k.Lt(jj, n);
      if (in.segments) seen = k.And(seen, SameSegment(k, k.Load(wg.key_segments, {jj}), qt.segment));
      k.If(seen, pair);
    });
    return llvm::SmallVector<Value>{};
  });
  k.If(qt.valid, [&] { StoreRow(k, dq, g.dq, q_base, s.D); });
}

}  // namespace

void EmitBackward(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, const Inputs& in,
                  const GradBuffers& grads) {
  const bool segmented = static_cast<bool>(in.segments);
  const llvm::StringRef suffix = segmented ? "_segments" : "";
  EmitDelta(host, loc, s, grads);
  EmitLaunch(host, loc, ("attention_grad_kv" + suffix).str(), {CeilDiv(s.T, kOwnedRows), s.Hkv, s.B},
             {kOwnedRows, 1, 1}, KeyValueGradTypes(host.getContext(), s, segmented),
             [&](KernelBuilder& k, mlir::ValueRange wg) { EmitKeyValueGradBody(k, s, in, grads, wg); });
  EmitLaunch(host, loc, ("attention_grad_q" + suffix).str(), {CeilDiv(s.T, kOwnedRows), s.H, s.B}, {kOwnedRows, 1, 1},
             KeyTileTypes(host.getContext(), s, segmented),
             [&](KernelBuilder& k, mlir::ValueRange wg) { EmitQueryGradBody(k, s, in, grads, wg); });
}

}  // namespace gpt_sft::compiler::gpu_lowering::attention
