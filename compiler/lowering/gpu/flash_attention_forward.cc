//===- flash_attention_forward.cc - attention forward on warp tiles -------===//
//
// This file implements EmitFlashForward (flash_attention.h). Grid (ceil(T / 64), H, B), four
// warps; warp w owns query rows i0 + 16 w .. + 15 and holds them as A fragments. For each
// key tile of 64 rows j0 below the query tile's end (causal; with segment ids, tiles whose
// id range cannot meet the query tile's are skipped whole):
//   1. K's 64 rows are staged as row pairs; S = Q K^T, 8 n-tiles of D/16 warp products;
//   2. scores scaled, masked (kMasked), the row max over the tile (GroupReduce over the four
//      lanes of a row), m' = max(m, max); P = exp(s - m') (0 where masked);
//      l = l e^(m - m') + sum P (each lane's own columns; summed over the row at the end);
//      acc = acc e^(m - m');
//   3. the same workgroup memory restaged with V as column pairs (32 KiB would not hold K
//      and V beside the emulation's scratch at D = 128); acc += bf16(P) V, P's A fragments
//      taken straight from S's accumulators.
// Then out = acc / l and lse = m + log l. The 64-key tiles are the interpreter's blocks, so
// the running max, and the probabilities rounded against it, are the interpreter's.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/flash_attention.h"
#include "compiler/lowering/gpu/flash_attention_tiles.h"

namespace gpt_sft::compiler::gpu_lowering::attention {
namespace {

using ::mlir::Value;

constexpr int64_t kKeyRows = 64;

struct ForwardMemory {
  Value kv, scratch, key_segments, query_segments;
};

llvm::SmallVector<mlir::MemRefType> ForwardTypes(mlir::MLIRContext* context, const Shape& s, bool segmented,
                                                 MmaRealization how) {
  auto i32 = mlir::IntegerType::get(context, 32);
  llvm::SmallVector<mlir::MemRefType> types{WorkgroupMemRef(context, {kKeyRows * s.D / 2}, i32)};
  if (int64_t n = WarpTiles::ScratchFloats(how, kFlashThreads)) {
    types.push_back(WorkgroupMemRef(context, {n}, mlir::Float32Type::get(context)));
  }
  if (segmented) {
    types.push_back(WorkgroupMemRef(context, {kKeyRows}, i32));
    types.push_back(WorkgroupMemRef(context, {kFlashRows}, i32));
  }
  return types;
}

ForwardMemory ForwardMemoryOf(mlir::ValueRange wg, bool segmented, MmaRealization how) {
  ForwardMemory m;
  size_t next = 0;
  m.kv = wg[next++];
  if (WarpTiles::ScratchFloats(how, kFlashThreads)) m.scratch = wg[next++];
  if (segmented) {
    m.key_segments = wg[next++];
    m.query_segments = wg[next++];
  }
  return m;
}

void EmitForwardBody(KernelBuilder& k, const Shape& s, const Inputs& in, Value out, Value lse, mlir::ValueRange wg,
                     MmaRealization how) {
  const ForwardMemory mem = ForwardMemoryOf(wg, static_cast<bool>(in.segments), how);
  WarpTiles wt(k, how, mem.scratch);
  const int64_t nd = s.D / 8, ns = kKeyRows / 8;  // n-tiles of the output and of the scores
  Value b = k.BlockId(2), h = k.BlockId(1), g = k.Div(h, k.Index(s.rep()));
  Value i0 = k.Mul(k.BlockId(0), k.Index(kFlashRows));
  Value row0 = k.Add(k.Add(i0, k.Mul(wt.warp(), k.Index(16))), wt.group());
  const std::array<Value, 2> rows{row0, k.Add(row0, k.Index(8))};
  Value last = k.Index(s.T - 1);
  auto q_row = [&](Value r) { return QRow(k, s, b, k.Min(r, last), h); };
  const std::vector<FragA> qa = LoadAFragments(k, wt, in.q, rows[0], rows[1], s.D, q_row);
  std::array<Value, 2> seg{};
  std::pair<Value, Value> q_range;
  if (in.segments) {
    for (int r = 0; r < 2; ++r) seg[r] = k.Load(in.segments, {k.Add(k.Mul(b, k.Index(s.T)), k.Min(rows[r], last))});
    q_range = StageSegmentRange(k, s, in.segments, mem.query_segments, b, i0,
                                k.Min(k.Index(kFlashRows), k.Sub(k.Index(s.T), i0)));
  }
  Value t2 = k.Mul(wt.in_group(), k.Index(2));
  Value scale = k.F32(s.scale());

  // Carried: acc (nd fragments), then m and l of the two rows.
  llvm::SmallVector<Value> init(nd * 4, k.F32(0.0));
  init.append({k.F32(kMasked), k.F32(kMasked), k.F32(0.0), k.F32(0.0)});
  Value end = k.Min(k.Add(i0, k.Index(kFlashRows)), k.Index(s.T));
  llvm::SmallVector<Value> final = k.For(k.Index(0), end, k.Index(kKeyRows), init, [&](Value j0, mlir::ValueRange c) {
    auto kv_row = [&](Value t) { return KvRow(k, s, b, t, g); };
    auto run = [&]() -> llvm::SmallVector<Value> {
      // 1. S = Q K^T.
      StageRowPairs(k, in.k, mem.kv, j0, k.Index(s.T), kKeyRows, s.D, kv_row);
      k.Barrier();
      std::vector<FragC> S(ns);
      for (int64_t n = 0; n < ns; ++n) {
        FragC acc = ZeroC(k);
        for (int64_t kk = 0; kk < s.D / 16; ++kk) acc = wt.Mma(qa[kk], BFragment(k, wt, mem.kv, 8 * n, kk, s.D / 2), acc);
        S[n] = acc;
      }
      // 2. The online softmax.
      std::array<Value, 2> mx{k.F32(kMasked), k.F32(kMasked)};
      std::vector<std::array<Value, 4>> seen(ns);
      for (int64_t n = 0; n < ns; ++n) {
        for (int e = 0; e < 4; ++e) {
          Value col = k.Add(t2, k.Index(8 * n + (e & 1)));
          Value seg_j = in.segments ? k.Load(mem.key_segments, {col}) : Value();
          seen[n][e] = Visible(k, s, rows[e / 2], k.Add(j0, col), seg[e / 2], seg_j);
          S[n][e] = k.Select(seen[n][e], k.FMul(S[n][e], scale), k.F32(kMasked));
          mx[e / 2] = k.FMax(mx[e / 2], S[n][e]);
        }
      }
      llvm::SmallVector<Value> tile_max = wt.GroupReduce({mx[0], mx[1]}, KernelBuilder::Reduction::kMax);
      std::array<Value, 2> m_new, correction, sum{k.F32(0.0), k.F32(0.0)};
      for (int r = 0; r < 2; ++r) {
        m_new[r] = k.FMax(c[nd * 4 + r], tile_max[r]);
        correction[r] = k.Exp(k.FSub(c[nd * 4 + r], m_new[r]));  // 0 on the first tile the row sees
      }
      for (int64_t n = 0; n < ns; ++n) {
        for (int e = 0; e < 4; ++e) {
          S[n][e] = k.Select(seen[n][e], k.Exp(k.FSub(S[n][e], m_new[e / 2])), k.F32(0.0));
          sum[e / 2] = k.FAdd(sum[e / 2], S[n][e]);
        }
      }
      std::vector<FragC> acc(nd);
      for (int64_t n = 0; n < nd; ++n) {
        for (int e = 0; e < 4; ++e) acc[n][e] = k.FMul(c[n * 4 + e], correction[e / 2]);
      }
      // 3. acc += bf16(P) V.
      k.Barrier();  // every warp is done with K
      StageColumnPairs(k, in.v, mem.kv, j0, k.Index(s.T), kKeyRows, s.D, kv_row);
      k.Barrier();
      for (int64_t kk = 0; kk < kKeyRows / 16; ++kk) {
        const FragA p = AFromC(k, S[2 * kk], S[2 * kk + 1]);
        for (int64_t n = 0; n < nd; ++n) acc[n] = wt.Mma(p, BFragment(k, wt, mem.kv, 8 * n, kk, kKeyRows / 2), acc[n]);
      }
      llvm::SmallVector<Value> next;
      for (const FragC& f : acc) next.append(f.begin(), f.end());
      next.append({m_new[0], m_new[1]});
      for (int r = 0; r < 2; ++r) next.push_back(k.Fma(c[nd * 4 + 2 + r], correction[r], sum[r]));
      return next;
    };
    k.Barrier();  // every reader of the previous tile is done
    if (!in.segments) return run();
    auto k_range = StageSegmentRange(k, s, in.segments, mem.key_segments, b, j0,
                                     k.Min(k.Index(kKeyRows), k.Sub(k.Index(s.T), j0)));
    return k.IfElse(RangesMeet(k, q_range, k_range), mlir::TypeRange(c), run,
                    [&] { return llvm::SmallVector<Value>(c.begin(), c.end()); });
  });
  // Every query sees itself, so l >= 1 on a valid row.
  llvm::SmallVector<Value> l = wt.GroupReduce({final[nd * 4 + 2], final[nd * 4 + 3]}, KernelBuilder::Reduction::kSum);
  for (int r = 0; r < 2; ++r) {
    k.If(k.Lt(rows[r], k.Index(s.T)), [&] {
      Value inv = k.FDiv(k.F32(1.0), l[r]);
      Value base = k.Add(QRow(k, s, b, rows[r], h), t2);
      for (int64_t n = 0; n < nd; ++n) {
        for (int e = 0; e < 2; ++e) {
          StoreElement(k, k.FMul(final[n * 4 + 2 * r + e], inv), out, k.Add(base, k.Index(8 * n + e)));
        }
      }
      k.If(k.Eq(wt.in_group(), k.Index(0)), [&] {
        k.Store(k.FAdd(final[nd * 4 + r], k.Log(l[r])), lse, {LseAt(k, s, b, h, rows[r])});
      });
    });
  }
}

}  // namespace

void EmitFlashForward(mlir::OpBuilder& host, mlir::Location loc, const Shape& s, const Inputs& in, Value out,
                      Value lse, MmaRealization how) {
  const bool segmented = static_cast<bool>(in.segments);
  EmitLaunch(host, loc, segmented ? "flash_attention_segments" : "flash_attention",
             {CeilDiv(s.T, kFlashRows), s.H, s.B}, {kFlashThreads, 1, 1},
             ForwardTypes(host.getContext(), s, segmented, how),
             [&](KernelBuilder& k, mlir::ValueRange wg) { EmitForwardBody(k, s, in, out, lse, wg, how); });
}

}  // namespace gpt_sft::compiler::gpu_lowering::attention
