//===- flash_attention_grad.cc - attention backward on warp tiles ---------===//
//
// This file implements EmitFlashBackward (flash_attention.h), FlashAttention-2's backward:
// probabilities recomputed from the forward's lse, every gradient element summed by one
// lane in a fixed order (deterministic, no atomics). Per visible pair (i, j) of a head:
//   P = exp(scale q_i . k_j - lse_i), dP = dO_i . v_j, dS = bf16(P (dP - Delta_i)),
//   dV_j += bf16(P) dO_i, dK_j += dS q_i (scaled once at the end), dQ_i += dS k_j (likewise).
//
//   delta   flash_attention_grad_delta: a work-item per row of out/dout,
//           Delta = dO . bf16(O) (the output autocast stores).
//   dk, dv  flash_attention_grad_kv: grid (ceil(T / 64), Hkv, B), four warps, warp w owns
//           key rows j0 + 16 w .. + 15 as A fragments of K and V, dK and dV accumulators in
//           registers. For each query tile of kQueryRows from j0 on (causal) and each query
//           head of kv head g: Q and dO staged as row pairs, S^T = K Q^T and dP^T = V dO^T;
//           then the same memory restaged as column pairs for dV += P^T dO, dK += dS^T Q.
//   dq      flash_attention_grad_q: grid (ceil(T / 64), H, B), warp w owns query rows as A
//           fragments of Q and dO, dQ in registers. For each key tile of kKeyRows below the
//           query tile's end: K and V staged as row pairs, S = Q K^T and dP = dO V^T; then K
//           restaged as column pairs for dQ += dS K.
// With segment ids, tile pairs whose id ranges cannot meet are skipped whole. Tiles of 32
// rows keep two staged [32, D] bf16 tiles, the emulation's scratch and the ids within
// kWorkgroupBytes at D = 128.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/flash_attention.h"
#include "compiler/lowering/gpu/flash_attention_tiles.h"

namespace gpt_sft::compiler::gpu_lowering::attention {
namespace {

using ::mlir::Value;

constexpr int64_t kQueryRows = 32;  // per staged query tile of the dk/dv kernel
constexpr int64_t kKeyRows = 32;    // per staged key tile of the dq kernel

/// delta[b, h, t] = dout[b, t, h, :] . bf16(out[b, t, h, :]).
void EmitDelta(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, const GradBuffers& g) {
  const int64_t rows = s.B * s.T * s.H, block = 128;
  EmitLaunch(host, loc, "flash_attention_grad_delta", {CeilDiv(rows, block), 1, 1}, {block, 1, 1}, {},
             [&](KernelBuilder& k, mlir::ValueRange) {
               Value r = k.GlobalId();  // (b * T + t) * H + h
               k.If(k.Lt(r, k.Index(rows)), [&] {
                 Value base = k.Mul(r, k.Index(s.D));
                 Value dot =
                     k.For(k.Index(0), k.Index(s.D), k.Index(1), {k.F32(0.0)}, [&](Value d, mlir::ValueRange a) {
                       Value at = k.Add(base, d);
                       Value o = RoundToBf16(k, LoadElement(k, g.out, at));
                       return llvm::SmallVector<Value>{k.Fma(LoadElement(k, g.dout, at), o, a[0])};
                     })[0];
                 Value bt = k.Div(r, k.Index(s.H));
                 Value b = k.Div(bt, k.Index(s.T)), t = k.Rem(bt, k.Index(s.T)), h = k.Rem(r, k.Index(s.H));
                 k.Store(dot, g.delta, {LseAt(k, s, b, h, t)});
               });
             });
}

/// The workgroup memory of both gradient kernels, in order: two staged tiles of `rows` x D
/// bf16 (as pairs), then the emulation's scratch, then with segment ids the ids of the
/// staged tile [rows] and of the owned rows [kFlashRows]; the dk/dv kernel also the staged
/// queries' lse and delta [rows].
struct GradMemory {
  Value a, b, scratch, lse, delta, staged_segments, owned_segments;
};

llvm::SmallVector<mlir::MemRefType> GradTypes(mlir::MLIRContext* context, const Shape& s, int64_t rows,
                                              bool segmented, bool with_rows_stats, MmaRealization how) {
  auto i32 = mlir::IntegerType::get(context, 32);
  auto f32 = mlir::Float32Type::get(context);
  llvm::SmallVector<mlir::MemRefType> types{WorkgroupMemRef(context, {rows * s.D / 2}, i32),
                                            WorkgroupMemRef(context, {rows * s.D / 2}, i32)};
  if (int64_t n = WarpTiles::ScratchFloats(how, kFlashThreads)) types.push_back(WorkgroupMemRef(context, {n}, f32));
  if (with_rows_stats) {
    types.push_back(WorkgroupMemRef(context, {rows}, f32));
    types.push_back(WorkgroupMemRef(context, {rows}, f32));
  }
  if (segmented) {
    types.push_back(WorkgroupMemRef(context, {rows}, i32));
    types.push_back(WorkgroupMemRef(context, {kFlashRows}, i32));
  }
  return types;
}

GradMemory GradMemoryOf(mlir::ValueRange wg, bool segmented, bool with_rows_stats, MmaRealization how) {
  GradMemory m;
  size_t next = 0;
  m.a = wg[next++];
  m.b = wg[next++];
  if (WarpTiles::ScratchFloats(how, kFlashThreads)) m.scratch = wg[next++];
  if (with_rows_stats) {
    m.lse = wg[next++];
    m.delta = wg[next++];
  }
  if (segmented) {
    m.staged_segments = wg[next++];
    m.owned_segments = wg[next++];
  }
  return m;
}

/// What every warp knows of the rows it owns: the two rows of its lane and, with segment ids,
/// their ids and the range of the workgroup's rows (staged: a barrier).
struct OwnedRows {
  Value b, first;  // batch row, the workgroup's first owned row
  std::array<Value, 2> rows, seg;
  std::pair<Value, Value> range;
};

OwnedRows OpenOwnedRows(KernelBuilder& k, const Shape& s, const Inputs& in, const WarpTiles& wt,
                        const GradMemory& mem) {
  OwnedRows o;
  o.b = k.BlockId(2);
  o.first = k.Mul(k.BlockId(0), k.Index(kFlashRows));
  o.rows[0] = k.Add(k.Add(o.first, k.Mul(wt.warp(), k.Index(16))), wt.group());
  o.rows[1] = k.Add(o.rows[0], k.Index(8));
  if (in.segments) {
    Value last = k.Index(s.T - 1);
    for (int r = 0; r < 2; ++r) o.seg[r] = k.Load(in.segments, {k.Add(k.Mul(o.b, k.Index(s.T)), k.Min(o.rows[r], last))});
    o.range = StageSegmentRange(k, s, in.segments, mem.owned_segments, o.b, o.first,
                                k.Min(k.Index(kFlashRows), k.Sub(k.Index(s.T), o.first)));
  }
  return o;
}

/// Fragments flattened for a loop's carried values, and back.
void Append(llvm::SmallVector<Value>& to, const std::vector<FragC>& frags) {
  for (const FragC& f : frags) to.append(f.begin(), f.end());
}
std::vector<FragC> Frags(mlir::ValueRange values, size_t first, size_t n) {
  std::vector<FragC> out(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t e = 0; e < 4; ++e) out[i][e] = values[first + 4 * i + e];
  }
  return out;
}

/// acc[n] += A(rows of 16) B for a product over `steps` k-steps, A's k-step kk from `a(kk)`,
/// B from the pair tile `tile` (stride pairs per row).
void Accumulate(KernelBuilder& k, WarpTiles& wt, std::vector<FragC>& acc, int64_t steps,
                llvm::function_ref<FragA(int64_t)> a, Value tile, int64_t stride) {
  for (int64_t kk = 0; kk < steps; ++kk) {
    const FragA frag = a(kk);
    for (size_t n = 0; n < acc.size(); ++n) acc[n] = wt.Mma(frag, BFragment(k, wt, tile, 8 * n, kk, stride), acc[n]);
  }
}

/// n-tiles of A B^T for A fragments `a` (k-steps over D) and B the row pair tile `tile`.
std::vector<FragC> ProductOverD(KernelBuilder& k, WarpTiles& wt, const std::vector<FragA>& a, Value tile,
                                int64_t tiles, int64_t D) {
  std::vector<FragC> out(tiles, ZeroC(k));
  Accumulate(k, wt, out, D / 16, [&](int64_t kk) { return a[kk]; }, tile, D / 2);
  return out;
}

void StoreRows(KernelBuilder& k, const Shape& s, const WarpTiles& wt, const OwnedRows& o,
               const std::vector<FragC>& acc, Value dst, llvm::function_ref<Value(Value)> row_base, Value factor) {
  Value t2 = k.Mul(wt.in_group(), k.Index(2));
  for (int r = 0; r < 2; ++r) {
    k.If(k.Lt(o.rows[r], k.Index(s.T)), [&] {
      Value base = k.Add(row_base(o.rows[r]), t2);
      for (size_t n = 0; n < acc.size(); ++n) {
        for (int e = 0; e < 2; ++e) {
          Value v = acc[n][2 * r + e];
          StoreElement(k, factor ? k.FMul(v, factor) : v, dst, k.Add(base, k.Index(8 * n + e)));
        }
      }
    });
  }
}

/// One warp's key rows over the query tiles that see them; see the file comment.
void EmitKeyValueGradBody(KernelBuilder& k, const Shape& s, const Inputs& in, const GradBuffers& gb,
                          mlir::ValueRange wg, MmaRealization how) {
  const GradMemory mem = GradMemoryOf(wg, static_cast<bool>(in.segments), /*with_rows_stats=*/true, how);
  WarpTiles wt(k, how, mem.scratch);
  const int64_t nd = s.D / 8, nq = kQueryRows / 8;
  const OwnedRows o = OpenOwnedRows(k, s, in, wt, mem);
  Value g = k.BlockId(1), last = k.Index(s.T - 1);
  auto kv_row = [&](Value t) { return KvRow(k, s, o.b, k.Min(t, last), g); };
  const std::vector<FragA> ka = LoadAFragments(k, wt, in.k, o.rows[0], o.rows[1], s.D, kv_row);
  Value t2 = k.Mul(wt.in_group(), k.Index(2)), scale = k.F32(s.scale());
  llvm::SmallVector<Value> init(2 * nd * 4, k.F32(0.0));  // dK, then dV
  llvm::SmallVector<Value> final = k.For(o.first, k.Index(s.T), k.Index(kQueryRows), init, [&](Value i0, mlir::ValueRange c) {
    Value rows = k.Min(k.Index(kQueryRows), k.Sub(k.Index(s.T), i0));
    auto heads = [&]() -> llvm::SmallVector<Value> {
      return k.For(k.Index(0), k.Index(s.rep()), k.Index(1), c, [&](Value r, mlir::ValueRange acc_in) {
        Value h = k.Add(k.Mul(g, k.Index(s.rep())), r);
        auto q_row = [&](Value t) { return QRow(k, s, o.b, t, h); };
        // 1. S^T = K Q^T and dP^T = V dO^T over query rows staged as row pairs.
        k.Barrier();  // every reader of the previous tiles is done
        StageRowPairs(k, in.q, mem.a, i0, k.Index(s.T), kQueryRows, s.D, q_row);
        StageRowPairs(k, gb.dout, mem.b, i0, k.Index(s.T), kQueryRows, s.D, q_row);
        StageVector(k, gb.lse, mem.lse, LseAt(k, s, o.b, h, i0), rows);
        StageVector(k, gb.delta, mem.delta, LseAt(k, s, o.b, h, i0), rows);
        k.Barrier();
        std::vector<FragC> p = ProductOverD(k, wt, ka, mem.a, nq, s.D);
        // V's fragments are loaded again for each tile (from cache): kept beside K's, dK's and
        // dV's, they would take the registers past what sm_90 has (255: spills).
        const std::vector<FragA> va = LoadAFragments(k, wt, in.v, o.rows[0], o.rows[1], s.D, kv_row);
        std::vector<FragC> ds = ProductOverD(k, wt, va, mem.b, nq, s.D);
        // 2. P^T and dS^T, zero where the query does not see the key.
        for (int64_t n = 0; n < nq; ++n) {
          for (int e = 0; e < 4; ++e) {
            Value col = k.Add(t2, k.Index(8 * n + (e & 1)));
            Value i = k.Add(i0, col);
            Value seg_i = in.segments ? k.Load(mem.staged_segments, {col}) : Value();
            Value seen = k.And(k.Lt(i, k.Index(s.T)), Visible(k, s, i, o.rows[e / 2], seg_i, o.seg[e / 2]));
            Value prob = k.Exp(k.FSub(k.FMul(p[n][e], scale), k.Load(mem.lse, {col})));
            p[n][e] = k.Select(seen, prob, k.F32(0.0));
            ds[n][e] = k.Select(seen, k.FMul(p[n][e], k.FSub(ds[n][e], k.Load(mem.delta, {col}))), k.F32(0.0));
          }
        }
        // 3. dV += bf16(P^T) dO, dK += bf16(dS^T) Q over the same rows as column pairs.
        k.Barrier();  // every warp is done with the row pairs
        StageColumnPairs(k, in.q, mem.a, i0, k.Index(s.T), kQueryRows, s.D, q_row);
        StageColumnPairs(k, gb.dout, mem.b, i0, k.Index(s.T), kQueryRows, s.D, q_row);
        k.Barrier();
        std::vector<FragC> dk = Frags(acc_in, 0, nd), dv = Frags(acc_in, nd * 4, nd);
        Accumulate(k, wt, dv, kQueryRows / 16, [&](int64_t kk) { return AFromC(k, p[2 * kk], p[2 * kk + 1]); },
                   mem.b, kQueryRows / 2);
        Accumulate(k, wt, dk, kQueryRows / 16, [&](int64_t kk) { return AFromC(k, ds[2 * kk], ds[2 * kk + 1]); },
                   mem.a, kQueryRows / 2);
        llvm::SmallVector<Value> next;
        Append(next, dk);
        Append(next, dv);
        return next;
      });
    };
    if (!in.segments) return heads();
    k.Barrier();  // every reader of the previous tile's ids is done
    auto q_range = StageSegmentRange(k, s, in.segments, mem.staged_segments, o.b, i0, rows);
    return k.IfElse(RangesMeet(k, o.range, q_range), mlir::TypeRange(c), heads,
                    [&] { return llvm::SmallVector<Value>(c.begin(), c.end()); });
  });
  auto kv_out = [&](Value t) { return KvRow(k, s, o.b, t, g); };
  StoreRows(k, s, wt, o, Frags(final, 0, nd), gb.dk, kv_out, scale);
  StoreRows(k, s, wt, o, Frags(final, nd * 4, nd), gb.dv, kv_out, nullptr);
}

/// One warp's query rows over the key tiles they see; see the file comment.
void EmitQueryGradBody(KernelBuilder& k, const Shape& s, const Inputs& in, const GradBuffers& gb,
                       mlir::ValueRange wg, MmaRealization how) {
  const GradMemory mem = GradMemoryOf(wg, static_cast<bool>(in.segments), /*with_rows_stats=*/false, how);
  WarpTiles wt(k, how, mem.scratch);
  const int64_t nd = s.D / 8, nk = kKeyRows / 8;
  const OwnedRows o = OpenOwnedRows(k, s, in, wt, mem);
  Value h = k.BlockId(1), g = k.Div(h, k.Index(s.rep())), last = k.Index(s.T - 1);
  auto q_row = [&](Value t) { return QRow(k, s, o.b, k.Min(t, last), h); };
  const std::vector<FragA> qa = LoadAFragments(k, wt, in.q, o.rows[0], o.rows[1], s.D, q_row);
  const std::vector<FragA> doa = LoadAFragments(k, wt, gb.dout, o.rows[0], o.rows[1], s.D, q_row);
  std::array<Value, 2> lse, delta;
  for (int r = 0; r < 2; ++r) {
    Value at = LseAt(k, s, o.b, h, k.Min(o.rows[r], last));
    lse[r] = k.Load(gb.lse, {at});
    delta[r] = k.Load(gb.delta, {at});
  }
  Value t2 = k.Mul(wt.in_group(), k.Index(2)), scale = k.F32(s.scale());
  Value end = k.Min(k.Add(o.first, k.Index(kFlashRows)), k.Index(s.T));  // causal: no key past the tile
  llvm::SmallVector<Value> init(nd * 4, k.F32(0.0));
  llvm::SmallVector<Value> final = k.For(k.Index(0), end, k.Index(kKeyRows), init, [&](Value j0, mlir::ValueRange c) {
    auto kv_row = [&](Value t) { return KvRow(k, s, o.b, t, g); };
    auto run = [&]() -> llvm::SmallVector<Value> {
      // 1. S = Q K^T and dP = dO V^T over key rows staged as row pairs.
      StageRowPairs(k, in.k, mem.a, j0, k.Index(s.T), kKeyRows, s.D, kv_row);
      StageRowPairs(k, in.v, mem.b, j0, k.Index(s.T), kKeyRows, s.D, kv_row);
      k.Barrier();
      std::vector<FragC> p = ProductOverD(k, wt, qa, mem.a, nk, s.D);
      std::vector<FragC> ds = ProductOverD(k, wt, doa, mem.b, nk, s.D);
      // 2. dS, zero where the query does not see the key.
      for (int64_t n = 0; n < nk; ++n) {
        for (int e = 0; e < 4; ++e) {
          Value col = k.Add(t2, k.Index(8 * n + (e & 1)));
          Value seg_j = in.segments ? k.Load(mem.staged_segments, {col}) : Value();
          Value seen = Visible(k, s, o.rows[e / 2], k.Add(j0, col), o.seg[e / 2], seg_j);
          Value prob = k.Exp(k.FSub(k.FMul(p[n][e], scale), lse[e / 2]));
          ds[n][e] = k.Select(seen, k.FMul(prob, k.FSub(ds[n][e], delta[e / 2])), k.F32(0.0));
        }
      }
      // 3. dQ += bf16(dS) K over the same keys as column pairs.
      k.Barrier();  // every warp is done with K's row pairs
      StageColumnPairs(k, in.k, mem.a, j0, k.Index(s.T), kKeyRows, s.D, kv_row);
      k.Barrier();
      std::vector<FragC> dq = Frags(c, 0, nd);
      Accumulate(k, wt, dq, kKeyRows / 16, [&](int64_t kk) { return AFromC(k, ds[2 * kk], ds[2 * kk + 1]); }, mem.a,
                 kKeyRows / 2);
      llvm::SmallVector<Value> next;
      Append(next, dq);
      return next;
    };
    k.Barrier();  // every reader of the previous tile is done
    if (!in.segments) return run();
    auto k_range = StageSegmentRange(k, s, in.segments, mem.staged_segments, o.b, j0,
                                     k.Min(k.Index(kKeyRows), k.Sub(k.Index(s.T), j0)));
    return k.IfElse(RangesMeet(k, o.range, k_range), mlir::TypeRange(c), run,
                    [&] { return llvm::SmallVector<Value>(c.begin(), c.end()); });
  });
  StoreRows(k, s, wt, o, Frags(final, 0, nd), gb.dq, [&](Value t) { return QRow(k, s, o.b, t, h); }, scale);
}

}  // namespace

void EmitFlashBackward(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, const Inputs& in,
                       const GradBuffers& grads, MmaRealization how) {
  const bool segmented = static_cast<bool>(in.segments);
  const llvm::StringRef suffix = segmented ? "_segments" : "";
  EmitDelta(host, loc, s, grads);
  EmitLaunch(host, loc, ("flash_attention_grad_kv" + suffix).str(), {CeilDiv(s.T, kFlashRows), s.Hkv, s.B},
             {kFlashThreads, 1, 1}, GradTypes(host.getContext(), s, kQueryRows, segmented, true, how),
             [&](KernelBuilder& k, mlir::ValueRange wg) { EmitKeyValueGradBody(k, s, in, grads, wg, how); });
  EmitLaunch(host, loc, ("flash_attention_grad_q" + suffix).str(), {CeilDiv(s.T, kFlashRows), s.H, s.B},
             {kFlashThreads, 1, 1}, GradTypes(host.getContext(), s, kKeyRows, segmented, false, how),
             [&](KernelBuilder& k, mlir::ValueRange wg) { EmitQueryGradBody(k, s, in, grads, wg, how); });
}

}  // namespace gpt_sft::compiler::gpu_lowering::attention
