//===- flash_attention_tiles.cc - what the warp-tile attention kernels share ===//
//
// This file implements the fragment loads, pair staging and element access of the
// warp-tile attention kernels (flash_attention_tiles.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/flash_attention_tiles.h"

namespace gpt_sft::compiler::gpu_lowering::attention {

using ::mlir::Value;

bool FlashSupports(const Shape& s) { return s.D % 16 == 0 && s.D <= 128; }

Value LoadElement(KernelBuilder& k, Value buffer, Value index) { return k.Load(buffer, {index}); }

void StoreElement(KernelBuilder& k, Value value, Value buffer, Value index) { k.Store(value, buffer, {index}); }

std::vector<FragA> LoadAFragments(KernelBuilder& k, const WarpTiles& wt, Value src, Value row0, Value row1, int64_t D,
                                  llvm::function_ref<Value(Value)> row_base) {
  Value base0 = row_base(row0), base1 = row_base(row1);
  Value t2 = k.Mul(wt.in_group(), k.Index(2));
  auto pair = [&](Value base, int64_t col) {
    Value at = k.Add(base, k.Add(t2, k.Index(col)));
    return PackBf16x2(k, LoadElement(k, src, at), LoadElement(k, src, k.Add(at, k.Index(1))));
  };
  std::vector<FragA> frags;
  for (int64_t kk = 0; kk < D / 16; ++kk) {
    frags.push_back({pair(base0, 16 * kk), pair(base1, 16 * kk), pair(base0, 16 * kk + 8), pair(base1, 16 * kk + 8)});
  }
  return frags;
}

namespace {

/// src's element d of tile row r, or 0 at or past `valid`.
Value RowElement(KernelBuilder& k, Value src, Value r0, Value r, Value valid, Value d,
                 llvm::function_ref<Value(Value)> row_base) {
  Value row = k.Add(r0, r);
  Value inside = k.Lt(row, valid);
  Value safe = k.Select(inside, row, r0);  // r0 < valid whenever a tile is staged
  return k.Select(inside, LoadElement(k, src, k.Add(row_base(safe), d)), k.F32(0.0));
}

}  // namespace

void StageRowPairs(KernelBuilder& k, Value src, Value tile, Value r0, Value valid, int64_t tile_rows, int64_t D,
                   llvm::function_ref<Value(Value)> row_base) {
  const int64_t pairs = D / 2;
  k.For(k.LocalLinearId(), k.Index(tile_rows * pairs), k.Index(k.threads()), [&](Value e) {
    Value r = k.Div(e, k.Index(pairs)), p = k.Rem(e, k.Index(pairs));
    Value d = k.Mul(p, k.Index(2));
    Value lo = RowElement(k, src, r0, r, valid, d, row_base);
    Value hi = RowElement(k, src, r0, r, valid, k.Add(d, k.Index(1)), row_base);
    k.Store(PackBf16x2(k, lo, hi), tile, {e});
  });
}

void StageColumnPairs(KernelBuilder& k, Value src, Value tile, Value r0, Value valid, int64_t tile_rows, int64_t D,
                      llvm::function_ref<Value(Value)> row_base) {
  const int64_t pairs = tile_rows / 2;
  // Consecutive work-items read consecutive d of a row pair (coalesced reads).
  k.For(k.LocalLinearId(), k.Index(pairs * D), k.Index(k.threads()), [&](Value e) {
    Value p = k.Div(e, k.Index(D)), d = k.Rem(e, k.Index(D));
    Value r = k.Mul(p, k.Index(2));
    Value lo = RowElement(k, src, r0, r, valid, d, row_base);
    Value hi = RowElement(k, src, r0, k.Add(r, k.Index(1)), valid, d, row_base);
    k.Store(PackBf16x2(k, lo, hi), tile, {k.Add(k.Mul(d, k.Index(pairs)), p)});
  });
}

FragB BFragment(KernelBuilder& k, const WarpTiles& wt, Value tile, int64_t n0, int64_t kk, int64_t stride) {
  Value row = k.Mul(k.Add(wt.group(), k.Index(n0)), k.Index(stride));
  Value at = k.Add(row, k.Add(wt.in_group(), k.Index(8 * kk)));
  return {k.Load(tile, {at}), k.Load(tile, {k.Add(at, k.Index(4))})};
}

FragA AFromC(KernelBuilder& k, const FragC& even, const FragC& odd) {
  return {PackBf16x2Rounded(k, even[0], even[1]), PackBf16x2Rounded(k, even[2], even[3]),
          PackBf16x2Rounded(k, odd[0], odd[1]), PackBf16x2Rounded(k, odd[2], odd[3])};
}

FragC ZeroC(KernelBuilder& k) {
  Value z = k.F32(0.0);
  return {z, z, z, z};
}

Value Visible(KernelBuilder& k, const Shape& s, Value i, Value j, Value seg_i, Value seg_j) {
  Value seen = k.And(k.Lt(j, k.Index(s.T)), k.Le(j, i));
  return seg_i ? k.And(seen, SameSegment(k, seg_i, seg_j)) : seen;
}

std::pair<Value, Value> StageSegmentRange(KernelBuilder& k, const Shape& s, Value segments, Value tile, Value b,
                                          Value r0, Value rows) {
  StageVector(k, segments, tile, k.Add(k.Mul(b, k.Index(s.T)), r0), rows);
  k.Barrier();
  return SegmentRange(k, tile, rows);
}

}  // namespace gpt_sft::compiler::gpu_lowering::attention
