//===- attention_tiles.h - what the attention kernels share ---------------===//
//
// Declares the pieces the flash-style attention kernels (attention_kernels.cc: the forward;
// attention_grad_kernels.cc: the backward) are built from: the op's shape, flat offsets into
// q/out/dq [B,T,H,D], k/v/dk/dv [B,T,Hkv,D] and lse/delta [B,H,T], tile sizes that fit the
// workgroup memory every device has, the staging of rows into workgroup memory, and the
// segment-id ranges that let a workgroup skip a whole tile pair no query of which can see a
// key of the other (the CPU kernel's Classify: runtime/kernels/cpu/attention.cc).
//
// Visibility everywhere: query i sees key j iff j <= i and (no segment ids, or
// seg[b, j] == seg[b, i]). A kernel bounds each work-item's loop by the causal rule (no work
// above the diagonal or past T) and masks by segment (and the one masked iteration of a
// work-item that sees no key of a tile: AtLeastOnce).
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_ATTENTION_TILES_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_ATTENTION_TILES_H_

#include <cmath>
#include <cstdint>
#include <utility>

#include "compiler/lowering/gpu/kernel_builder.h"

namespace gpt_sft::compiler::gpu_lowering::attention {

/// q [B,T,H,D], k/v [B,T,Hkv,D]; query head h reads kv head h / rep().
struct Shape {
  int64_t B, T, H, Hkv, D;
  int64_t rep() const { return H / Hkv; }
  /// The only scale the kernels run (the interpreter's default).
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(D)); }
};

/// The operands every kernel reads, as flat memrefs; `segments` [B*T] i32 is null for plain
/// causal attention.
struct Inputs {
  mlir::Value q, k, v, segments;
};

/// Work-items (one row each) of the kernels that own a tile of rows: the forward and dq own
/// query rows, dk/dv own key rows.
inline constexpr int64_t kOwnedRows = 64;
/// Workgroup memory a kernel may use: OpenCL's guaranteed minimum (CUDA gives 48 KiB).
inline constexpr int64_t kWorkgroupBytes = 32 * 1024;
/// A score no visible key has: masked keys get it, and it never makes exp(-inf + inf).
inline constexpr double kMasked = -1e30;

/// Rows of the two staged [rows, D] f32 tiles (k and v, or q and dout) such that they, plus
/// `row_extra_bytes` per staged row and `fixed_bytes`, fit in kWorkgroupBytes: a multiple of
/// 8, between 8 and 64 (D = 16, 32: 64 rows; D = 64: 56; D = 128: 24).
int64_t StagedRows(int64_t D, int64_t row_extra_bytes, int64_t fixed_bytes);

/// Flat offsets of element 0 of a row: q/out/dout/dq [B,T,H,D], k/v/dk/dv [B,T,Hkv,D];
/// and of lse/delta [B,H,T].
mlir::Value QRow(KernelBuilder& k, const Shape& s, mlir::Value b, mlir::Value t, mlir::Value h);
mlir::Value KvRow(KernelBuilder& k, const Shape& s, mlir::Value b, mlir::Value t, mlir::Value g);
mlir::Value LseAt(KernelBuilder& k, const Shape& s, mlir::Value b, mlir::Value h, mlir::Value t);

/// Copies rows r0 .. r0 + rows - 1 (`rows` uniform, r0 + rows <= T) of `src` (row r starts at
/// `row_base(r)`) into `tile` [.., D] row by row, the workgroup's work-items along the
/// contiguous D (coalesced). No barrier.
void StageRows(KernelBuilder& k, mlir::Value src, mlir::Value tile, mlir::Value r0, mlir::Value rows, int64_t D,
               llvm::function_ref<mlir::Value(mlir::Value)> row_base);
/// tile[e] = src[base + e] for e < n, spread over the workgroup's work-items. No barrier.
void StageVector(KernelBuilder& k, mlir::Value src, mlir::Value tile, mlir::Value base, mlir::Value n);

/// (min, max) of the i32 `tile[0 .. n)` (n >= 1), scanned by each work-item (the same values
/// for all: uniform, so a branch on them may hold barriers).
std::pair<mlir::Value, mlir::Value> SegmentRange(KernelBuilder& k, mlir::Value tile, mlir::Value n);
/// Whether segment ranges [lo_a, hi_a] and [lo_b, hi_b] share an id (else no query of one
/// tile sees a key of the other).
mlir::Value RangesMeet(KernelBuilder& k, std::pair<mlir::Value, mlir::Value> a, std::pair<mlir::Value, mlir::Value> b);
/// a == b for i32 values.
mlir::Value SameSegment(KernelBuilder& k, mlir::Value a, mlir::Value b);

/// sum_d a[d] * tile[base + d] for d < D, `a` private.
mlir::Value Dot(KernelBuilder& k, mlir::Value a, mlir::Value tile, mlir::Value base, int64_t D);
/// acc[d] += w * tile[base + d] for d < D, `acc` private.
void Axpy(KernelBuilder& k, mlir::Value w, mlir::Value tile, mlir::Value base, mlir::Value acc, int64_t D);
/// a private [D] f32 array holding src[base .. base + D) * factor (factor 1: a copy).
mlir::Value LoadRow(KernelBuilder& k, mlir::Value src, mlir::Value base, int64_t D, double factor = 1.0);
/// a private [D] f32 array of zeros.
mlir::Value ZeroRow(KernelBuilder& k, int64_t D);
/// dst[base + d] = row[d] * factor (factor 1: a copy).
void StoreRow(KernelBuilder& k, mlir::Value row, mlir::Value dst, mlir::Value base, int64_t D,
              mlir::Value factor = nullptr);

/// The workgroup memory of a kernel over the query rows of a tile (the forward, dq): staged
/// key and value tiles [rows * D], and with segment ids the key tile's and the query tile's
/// ids.
struct KeyTiles {
  int64_t rows;  // staged key rows per tile
  mlir::Value keys, values, key_segments, query_segments;
};
/// The workgroup buffer types of KeyTiles for `s`, in order (segment buffers only when
/// `segmented`).
llvm::SmallVector<mlir::MemRefType> KeyTileTypes(mlir::MLIRContext* context, const Shape& s, bool segmented);
KeyTiles KeyTilesOf(const Shape& s, mlir::ValueRange workgroup);

/// The work-items' view of one query tile in a kernel over query rows: b, h, the kv head
/// g, the tile's first row i0, this work-item's row i (valid: i < T; i_safe: i clamped into
/// the tensor, for loads), and with segment ids its id and the tile's id range.
struct QueryTile {
  mlir::Value b, h, g, i0, i, valid, i_safe;
  mlir::Value segment;                                // i32 seg[b, i_safe]
  std::pair<mlir::Value, mlir::Value> segment_range;  // (min, max) over the tile's rows
};
/// Reads ids and, with segment ids, stages the query tile's ids and finds their range (a
/// barrier). Grid: (query tiles, H, B), kOwnedRows work-items.
QueryTile OpenQueryTile(KernelBuilder& k, const Shape& s, const Inputs& in, const KeyTiles& wg);

/// For each key tile j0 = 0, rows, 2 rows, .. below the end of the query tile (causal), k and
/// v rows of kv head g staged in `wg`; tiles whose ids cannot meet the query tile's are
/// skipped (their loads too). `body(j0, carried)` runs after the staging barrier and returns
/// the next carried values; returns the last ones.
llvm::SmallVector<mlir::Value> ForEachKeyTile(
    KernelBuilder& k, const Shape& s, const Inputs& in, const KeyTiles& wg, const QueryTile& qt, mlir::ValueRange init,
    llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value, mlir::ValueRange)> body);

/// How many keys of the tile starting at j0 work-item row i sees by the causal rule:
/// min(rows, i + 1 - j0), 0 when i < j0 or the row is padding (i >= T).
mlir::Value CausalKeys(KernelBuilder& k, const QueryTile& qt, mlir::Value j0, int64_t rows);

/// max(n, 1): the trip count of a loop whose length differs between work-items. PoCL 3.1
/// miscomputes a workgroup in which some work-items run a value-carrying loop zero times
/// inside a loop that holds barriers (seen in these kernels: other work-items' results go
/// wrong, or reads run off their buffers; POCL_WORK_GROUP_METHOD=cbs or loopvec alike), so
/// such loops run at least once and mask the extra iteration.
mlir::Value AtLeastOnce(KernelBuilder& k, mlir::Value n);

}  // namespace gpt_sft::compiler::gpu_lowering::attention

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_ATTENTION_TILES_H_
