//===- attention_tiles.cc - what the attention kernels share --------------===//
//
// This file implements the attention kernels' shared pieces (attention_tiles.h): offsets,
// tile sizes, staging into workgroup memory, segment ranges, private-row arithmetic, and
// the loop over the key tiles a query tile sees.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/attention_tiles.h"

#include <algorithm>
#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace gpt_sft::compiler::gpu_lowering::attention {

using ::mlir::Value;
namespace arith = ::mlir::arith;

int64_t StagedRows(int64_t D, int64_t row_extra_bytes, int64_t fixed_bytes) {
  const int64_t per_row = 2 * D * static_cast<int64_t>(sizeof(float)) + row_extra_bytes;
  const int64_t rows = (kWorkgroupBytes - fixed_bytes) / per_row / 8 * 8;
  return std::clamp<int64_t>(rows, 8, 64);
}

Value QRow(KernelBuilder& k, const Shape& s, Value b, Value t, Value h) {
  return k.Mul(k.Add(k.Mul(k.Add(k.Mul(b, k.Index(s.T)), t), k.Index(s.H)), h), k.Index(s.D));
}

Value KvRow(KernelBuilder& k, const Shape& s, Value b, Value t, Value g) {
  return k.Mul(k.Add(k.Mul(k.Add(k.Mul(b, k.Index(s.T)), t), k.Index(s.Hkv)), g), k.Index(s.D));
}

Value LseAt(KernelBuilder& k, const Shape& s, Value b, Value h, Value t) {
  return k.Add(k.Mul(k.Add(k.Mul(b, k.Index(s.H)), h), k.Index(s.T)), t);
}

void StageRows(KernelBuilder& k, Value src, Value tile, Value r0, Value rows, int64_t D,
               llvm::function_ref<Value(Value)> row_base) {
  k.For(k.LocalLinearId(), k.Mul(rows, k.Index(D)), k.Index(k.threads()), [&](Value e) {
    Value r = k.Div(e, k.Index(D)), d = k.Rem(e, k.Index(D));
    k.Store(k.Load(src, {k.Add(row_base(k.Add(r0, r)), d)}), tile, {e});
  });
}

void StageVector(KernelBuilder& k, Value src, Value tile, Value base, Value n) {
  k.For(k.LocalLinearId(), n, k.Index(k.threads()),
        [&](Value e) { k.Store(k.Load(src, {k.Add(base, e)}), tile, {e}); });
}

std::pair<Value, Value> SegmentRange(KernelBuilder& k, Value tile, Value n) {
  auto& b = k.b();
  llvm::SmallVector<Value> range = k.For(
      k.Index(0), n, k.Index(1),
      {k.I32(std::numeric_limits<int32_t>::max()), k.I32(std::numeric_limits<int32_t>::min())},
      [&](Value e, mlir::ValueRange lo_hi) {
        Value id = k.Load(tile, {e});
        return llvm::SmallVector<Value>{b.create<arith::MinSIOp>(lo_hi[0], id), b.create<arith::MaxSIOp>(lo_hi[1], id)};
      });
  return {range[0], range[1]};
}

Value RangesMeet(KernelBuilder& k, std::pair<Value, Value> a, std::pair<Value, Value> b) {
  auto le = [&](Value x, Value y) { return k.b().create<arith::CmpIOp>(arith::CmpIPredicate::sle, x, y); };
  return k.And(le(a.first, b.second), le(b.first, a.second));
}

Value SameSegment(KernelBuilder& k, Value a, Value b) { return k.Eq(a, b); }

Value Dot(KernelBuilder& k, Value a, Value tile, Value base, int64_t D) {
  return k.For(k.Index(0), k.Index(D), k.Index(1), {k.F32(0.0)}, [&](Value d, mlir::ValueRange acc) {
    return llvm::SmallVector<Value>{k.Fma(k.Load(a, {d}), k.Load(tile, {k.Add(base, d)}), acc[0])};
  })[0];
}

void Axpy(KernelBuilder& k, Value w, Value tile, Value base, Value acc, int64_t D) {
  k.For(0, D, 1, [&](Value d) { k.Store(k.Fma(w, k.Load(tile, {k.Add(base, d)}), k.Load(acc, {d})), acc, {d}); });
}

Value LoadRow(KernelBuilder& k, Value src, Value base, int64_t D, double factor) {
  Value row = k.PrivateArray(D, k.b().getF32Type());
  k.For(0, D, 1, [&](Value d) {
    Value x = k.Load(src, {k.Add(base, d)});
    k.Store(factor == 1.0 ? x : k.FMul(x, k.F32(factor)), row, {d});
  });
  return row;
}

Value ZeroRow(KernelBuilder& k, int64_t D) {
  Value row = k.PrivateArray(D, k.b().getF32Type());
  k.For(0, D, 1, [&](Value d) { k.Store(k.F32(0.0), row, {d}); });
  return row;
}

void StoreRow(KernelBuilder& k, Value row, Value dst, Value base, int64_t D, Value factor) {
  k.For(0, D, 1, [&](Value d) {
    Value x = k.Load(row, {d});
    k.Store(factor ? k.FMul(x, factor) : x, dst, {k.Add(base, d)});
  });
}

namespace {

// Key rows per staged tile of a kernel over query rows: k and v tiles, a key id per row, and
// the query tile's ids.
int64_t KeyTileRows(const Shape& s) { return StagedRows(s.D, sizeof(int32_t), kOwnedRows * sizeof(int32_t)); }

}  // namespace

llvm::SmallVector<mlir::MemRefType> KeyTileTypes(mlir::MLIRContext* context, const Shape& s, bool segmented) {
  const int64_t rows = KeyTileRows(s);
  auto f32 = mlir::Float32Type::get(context);
  auto i32 = mlir::IntegerType::get(context, 32);
  llvm::SmallVector<mlir::MemRefType> types{WorkgroupMemRef(context, {rows * s.D}, f32),
                                            WorkgroupMemRef(context, {rows * s.D}, f32)};
  if (segmented) {
    types.push_back(WorkgroupMemRef(context, {rows}, i32));
    types.push_back(WorkgroupMemRef(context, {kOwnedRows}, i32));
  }
  return types;
}

KeyTiles KeyTilesOf(const Shape& s, mlir::ValueRange workgroup) {
  KeyTiles tiles{KeyTileRows(s), workgroup[0], workgroup[1], nullptr, nullptr};
  if (workgroup.size() == 4) {
    tiles.key_segments = workgroup[2];
    tiles.query_segments = workgroup[3];
  }
  return tiles;
}

QueryTile OpenQueryTile(KernelBuilder& k, const Shape& s, const Inputs& in, const KeyTiles& wg) {
  QueryTile qt;
  qt.b = k.BlockId(2);
  qt.h = k.BlockId(1);
  qt.g = k.Div(qt.h, k.Index(s.rep()));
  qt.i0 = k.Mul(k.BlockId(0), k.Index(kOwnedRows));
  qt.i = k.Add(qt.i0, k.ThreadId(0));
  qt.valid = k.Lt(qt.i, k.Index(s.T));
  qt.i_safe = k.Min(qt.i, k.Index(s.T - 1));
  if (in.segments) {
    Value row = k.Mul(qt.b, k.Index(s.T));
    qt.segment = k.Load(in.segments, {k.Add(row, qt.i_safe)});
    Value n = k.Min(k.Index(kOwnedRows), k.Sub(k.Index(s.T), qt.i0));
    StageVector(k, in.segments, wg.query_segments, k.Add(row, qt.i0), n);
    k.Barrier();
    qt.segment_range = SegmentRange(k, wg.query_segments, n);
  }
  return qt;
}

llvm::SmallVector<Value> ForEachKeyTile(KernelBuilder& k, const Shape& s, const Inputs& in, const KeyTiles& wg,
                                        const QueryTile& qt, mlir::ValueRange init,
                                        llvm::function_ref<llvm::SmallVector<Value>(Value, mlir::ValueRange)> body) {
  Value end = k.Min(k.Add(qt.i0, k.Index(kOwnedRows)), k.Index(s.T));  // causal: no key past the tile
  return k.For(k.Index(0), end, k.Index(wg.rows), init, [&](Value j0, mlir::ValueRange carried) {
    Value rows = k.Min(k.Index(wg.rows), k.Sub(k.Index(s.T), j0));
    auto stage_and_run = [&] {
      auto kv_row = [&](Value t) { return KvRow(k, s, qt.b, t, qt.g); };
      StageRows(k, in.k, wg.keys, j0, rows, s.D, kv_row);
      StageRows(k, in.v, wg.values, j0, rows, s.D, kv_row);
      k.Barrier();
      return body(j0, carried);
    };
    k.Barrier();  // every reader of the previous tile is done
    if (!in.segments) return stage_and_run();
    StageVector(k, in.segments, wg.key_segments, k.Add(k.Mul(qt.b, k.Index(s.T)), j0), rows);
    k.Barrier();
    Value meets = RangesMeet(k, qt.segment_range, SegmentRange(k, wg.key_segments, rows));
    if (carried.empty()) {  // (KernelBuilder::IfElse of no results would yield twice)
      k.If(meets, [&] { stage_and_run(); });
      return llvm::SmallVector<Value>{};
    }
    return k.IfElse(meets, mlir::TypeRange(carried), stage_and_run,
                    [&] { return llvm::SmallVector<Value>(carried.begin(), carried.end()); });
  });
}

Value CausalKeys(KernelBuilder& k, const QueryTile& qt, Value j0, int64_t rows) {
  Value next = k.Add(qt.i, k.Index(1));
  Value sees = k.And(qt.valid, k.Lt(j0, next));
  return k.Select(sees, k.Min(k.Index(rows), k.Sub(next, j0)), k.Index(0));
}

Value AtLeastOnce(KernelBuilder& k, Value n) { return k.b().create<arith::MaxUIOp>(n, k.Index(1)); }

}  // namespace gpt_sft::compiler::gpu_lowering::attention
