//===- flash_attention_tiles.h - what the warp-tile attention kernels share -===//
//
// Declares the pieces of the FlashAttention-2 kernels that run attention under bf16 autocast
// on warp tile products (mma_tile.h; flash_attention_forward.cc, flash_attention_grad.cc):
//
// * A workgroup is kWarps warps; warp w owns 16 rows (query rows for the forward and dq, key
//   rows for dk/dv) of the workgroup's kFlashRows, and holds them as A fragments: D/16 k-steps
//   of 4 x i32 per lane, loaded once from global memory.
// * The other operand's tile is staged in workgroup memory as bf16 pairs (i32), either along
//   D ("row pairs": tile[r][p] = {x[r][2p], x[r][2p+1]}, the B operand of a product over D) or
//   along the rows ("column pairs": tile[d][p] = {x[2p][d], x[2p+1][d]}, the B operand of a
//   product over rows). Rows past T are staged as zeros: workgroup memory starts undefined,
//   and a NaN there times a masked zero would still be NaN.
// * Every element of q, k, v, out, dout, dq, dk, dv is read by LoadElement and written by
//   StoreElement: the one place that knows the buffers hold f32 (bf16 values).
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_FLASH_ATTENTION_TILES_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_FLASH_ATTENTION_TILES_H_

#include <cstdint>
#include <vector>

#include "compiler/lowering/gpu/attention_tiles.h"
#include "compiler/lowering/gpu/mma_tile.h"

namespace gpt_sft::compiler::gpu_lowering::attention {

inline constexpr int64_t kWarps = 4;
inline constexpr int64_t kFlashThreads = kWarps * kWarpSize;
/// Rows a workgroup owns: 16 per warp.
inline constexpr int64_t kFlashRows = 16 * kWarps;

/// Whether the warp-tile kernels run shape `s`: D a multiple of 16 (the k-step) and at most
/// 128 (its staged tiles within kWorkgroupBytes).
bool FlashSupports(const Shape& s);

/// f32 `buffer[index]` of an operand or result (see the file comment).
mlir::Value LoadElement(KernelBuilder& k, mlir::Value buffer, mlir::Value index);
void StoreElement(KernelBuilder& k, mlir::Value value, mlir::Value buffer, mlir::Value index);

/// The A fragments of the warp's 16 rows: row r of them starts at `row_base(r)` (r a row
/// index of the tensor, already clamped), rows `row0` (= first + g) and `row0 + 8`.
std::vector<FragA> LoadAFragments(KernelBuilder& k, const WarpTiles& wt, mlir::Value src, mlir::Value row0,
                                  mlir::Value row1, int64_t D,
                                  llvm::function_ref<mlir::Value(mlir::Value)> row_base);

/// Stages `tile_rows` rows r0 .. of `src` (row r at `row_base(r)`) as row pairs
/// [tile_rows][D/2]; rows at or past `valid` (uniform) are zeros. No barrier.
void StageRowPairs(KernelBuilder& k, mlir::Value src, mlir::Value tile, mlir::Value r0, mlir::Value valid,
                   int64_t tile_rows, int64_t D, llvm::function_ref<mlir::Value(mlir::Value)> row_base);
/// The same rows as column pairs [D][tile_rows/2]. No barrier.
void StageColumnPairs(KernelBuilder& k, mlir::Value src, mlir::Value tile, mlir::Value r0, mlir::Value valid,
                      int64_t tile_rows, int64_t D, llvm::function_ref<mlir::Value(mlir::Value)> row_base);

/// The B fragment of a pair-packed tile with `stride` pairs per row: columns n0 .. n0 + 7 of
/// the product are tile rows n0 + g, k-step kk its pairs 8 kk + t and 8 kk + 4 + t.
FragB BFragment(KernelBuilder& k, const WarpTiles& wt, mlir::Value tile, int64_t n0, int64_t kk, int64_t stride);

/// The A fragment of k-step kk of a product whose left operand is a C-layout result (the
/// scores' n-tiles 2 kk and 2 kk + 1), each value rounded to bf16.
FragA AFromC(KernelBuilder& k, const FragC& even, const FragC& odd);

/// Zeros as an accumulator.
FragC ZeroC(KernelBuilder& k);

/// Whether query i sees key j (index values): j < T, j <= i, and with segment ids (i32
/// values, null without) the same id.
mlir::Value Visible(KernelBuilder& k, const Shape& s, mlir::Value i, mlir::Value j, mlir::Value seg_i,
                    mlir::Value seg_j);

/// The ids of `rows` rows from r0 of batch row b staged into `tile` (workgroup i32), and their
/// (min, max), the same for every work-item; a barrier inside, so uniform control flow only.
std::pair<mlir::Value, mlir::Value> StageSegmentRange(KernelBuilder& k, const Shape& s, mlir::Value segments,
                                                      mlir::Value tile, mlir::Value b, mlir::Value r0,
                                                      mlir::Value rows);

}  // namespace gpt_sft::compiler::gpu_lowering::attention

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_FLASH_ATTENTION_TILES_H_
