//===- mma_tile.h - one warp's m16n8k16 bf16 tile product -----------------===//
//
// Declares the tensor-core seam of the generated kernels: D[16x8] = A[16x16] B[16x8] + C,
// bf16 operands, f32 accumulators, held by the 32 lanes of a warp in the PTX ISA's
// m16n8k16 fragment layout (lane = 4 group + t, group = lane / 4, t = lane % 4):
//
//   A (row-major, 4 x i32, each two bf16, the lower half first):
//     a[0] = A[g][2t, 2t+1]    a[1] = A[g+8][2t, 2t+1]
//     a[2] = A[g][2t+8, +9]    a[3] = A[g+8][2t+8, +9]
//   B (column-major, 2 x i32): b[0] = B[2t, 2t+1][g]   b[1] = B[2t+8, 2t+9][g]
//   C, D (4 x f32):  c[0], c[1] = C[g][2t, 2t+1]   c[2], c[3] = C[g+8][2t, 2t+1]
//
// Fragments are SSA values (registers), never private arrays. Two realizations, one per
// target (GpuLoweringOptions::mma):
//   kNvvm      a call of llvm.nvvm.mma.m16n8k16.row.col.bf16 (mma.sync.aligned ... bf16);
//              MLIR 19 lowers bf16 MMA through neither nvgpu.mma.sync nor nvvm.mma.sync.
//   kEmulated  each lane writes its fragments into its warp's slice of workgroup memory,
//              a barrier, each lane sums its four D elements over k in order, a barrier.
// So an OpenCL device (PoCL) runs everything a kernel does but the instruction itself.
// The emulation's barriers are workgroup-wide: every product must be reached by the whole
// workgroup (uniform control flow), as KernelBuilder::Barrier demands.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_MMA_TILE_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_MMA_TILE_H_

#include <array>
#include <cstdint>

#include "compiler/lowering/gpu/gemm_backend.h"
#include "compiler/lowering/gpu/kernel_builder.h"

namespace gpt_sft::compiler::gpu_lowering {

inline constexpr int64_t kWarpSize = 32;

using FragA = std::array<mlir::Value, 4>;  // i32 (bf16x2)
using FragB = std::array<mlir::Value, 2>;  // i32 (bf16x2)
using FragC = std::array<mlir::Value, 4>;  // f32

/// Two f32 values that are bf16 values (exactly), as one i32: `lo` in the lower half.
mlir::Value PackBf16x2(KernelBuilder& k, mlir::Value lo, mlir::Value hi);
/// f32 `x` rounded to the nearest bf16 value (ties to even), as f32.
mlir::Value RoundToBf16(KernelBuilder& k, mlir::Value x);
/// The same for any f32 values, each rounded to the nearest bf16 (ties to even, the
/// interpreter's RoundToBf16 for finite values).
mlir::Value PackBf16x2Rounded(KernelBuilder& k, mlir::Value lo, mlir::Value hi);

/// The warp-level primitives of one kernel, for one realization.
class WarpTiles {
 public:
  /// `scratch`: for kEmulated, workgroup memory of ScratchFloats(threads) f32; null for kNvvm.
  WarpTiles(KernelBuilder& k, MmaRealization how, mlir::Value scratch);

  /// f32 elements of workgroup memory the realization needs for a workgroup of `threads`.
  static int64_t ScratchFloats(MmaRealization how, int64_t threads);

  mlir::Value lane() const { return lane_; }
  mlir::Value warp() const { return warp_; }
  mlir::Value group() const { return group_; }          // lane / 4: the fragment row g
  mlir::Value in_group() const { return in_group_; }    // lane % 4: t

  /// D = A B + C (MmaTileM16N8K16).
  FragC Mma(const FragA& a, const FragB& b, const FragC& c);

  /// Each value combined over the four lanes of the lane's group (the lanes that hold one
  /// row of a C fragment), returned to all four.
  llvm::SmallVector<mlir::Value> GroupReduce(llvm::ArrayRef<mlir::Value> values, KernelBuilder::Reduction kind);

 private:
  KernelBuilder& k_;
  MmaRealization how_;
  mlir::Value scratch_, lane_, warp_, group_, in_group_;
};

}  // namespace gpt_sft::compiler::gpu_lowering

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_MMA_TILE_H_
