//===- layout_kernels.cc - GPU kernels for gpt.transpose ------------------===//
//
// This file implements EmitLayout: y = x with its dims permuted (y dim i = x dim perm[i]),
// any rank (the interpreter's Permute goes to 8), in one of three ways:
//   * nothing, when the transpose only feeds gpt.matmul weights that read its input with the
//     gemm's transpose flag instead (matmul_fusion.h: the input gradient's w^T);
//   * when the innermost dim moves (perm.back() != rank - 1; [1, 0] is the common case), a
//     tiled transpose through workgroup memory: x's innermost dim b and the dim a that
//     becomes y's innermost are cut into 32 x 32 tiles, one per workgroup of 32 x 8
//     work-items (each moves 4 elements), read along b and written along a so both global
//     accesses are coalesced; the tile is padded to 33 columns so the transposed reads of
//     workgroup memory fall in distinct banks. The other dims are batch: grid z and a loop;
//   * else (the innermost dim stays, so runs of it are contiguous on both sides) a gather, a
//     work-item per output element (grid-stride), its index delinearised over y's shape and
//     mapped through the permutation to x's flat index.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "compiler/lowering/gpu/matmul_fusion.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;

constexpr int64_t kTile = 32, kRowsPerPass = 8;  // a 32 x 8 workgroup moves a 32 x 32 tile
constexpr int64_t kMaxGridZ = 65535;             // CUDA's limit on grid z (and y)

llvm::SmallVector<int64_t> RowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// One work-item per element of y, grid-stride: y[i] = x[source(i)].
void EmitGather(mlir::OpBuilder& host, mlir::Location loc, Value x_flat, Value y_flat, llvm::ArrayRef<int64_t> x_shape,
                llvm::ArrayRef<int64_t> y_shape, llvm::ArrayRef<int64_t> perm) {
  const llvm::SmallVector<int64_t> x_strides = RowMajorStrides(x_shape);
  int64_t n = 1;
  for (int64_t d : y_shape) n *= d;
  const int64_t block = 256, grid = std::min<int64_t>(CeilDiv(n, block), 65535);
  EmitLaunch(host, loc, "transpose", {grid, 1, 1}, {block, 1, 1}, {}, [&](KernelBuilder& k, mlir::ValueRange) {
    k.For(k.GlobalId(), k.Index(n), k.Index(grid * block), [&](Value i) {
      // Output index (i_0, ..., i_{r-1}) over y's shape; y dim d is x dim perm[d].
      Value rest = i, src = k.Index(0);
      for (int64_t d = static_cast<int64_t>(y_shape.size()) - 1; d >= 0; --d) {
        Value dim = k.Index(y_shape[d]);
        Value idx = k.Rem(rest, dim);
        rest = k.Div(rest, dim);
        src = k.Add(src, k.Mul(idx, k.Index(x_strides[perm[d]])));
      }
      k.Store(k.Load(x_flat, {src}), y_flat, {i});
    });
  });
}

/// The tiled transpose of the file comment, for perm.back() != rank - 1.
void EmitTiled(mlir::OpBuilder& host, mlir::Location loc, Value x_flat, Value y_flat, llvm::ArrayRef<int64_t> x_shape,
               llvm::ArrayRef<int64_t> y_shape, llvm::ArrayRef<int64_t> perm, mlir::Type element) {
  const int64_t rank = static_cast<int64_t>(x_shape.size());
  const llvm::SmallVector<int64_t> x_strides = RowMajorStrides(x_shape), y_strides = RowMajorStrides(y_shape);
  llvm::SmallVector<int64_t> y_stride_of(rank);  // y's stride of x dim d
  for (int64_t i = 0; i < rank; ++i) y_stride_of[perm[i]] = y_strides[i];
  const int64_t a = perm.back(), b = rank - 1;  // a: y's innermost; b: x's innermost
  const int64_t size_a = x_shape[a], size_b = x_shape[b];
  llvm::SmallVector<int64_t> batch_dims;  // x dims other than a and b, outermost first
  int64_t batch = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != a && d != b) {
      batch_dims.push_back(d);
      batch *= x_shape[d];
    }
  }
  const int64_t grid_z = std::min(batch, kMaxGridZ);
  const Dims grid = {CeilDiv(size_b, kTile), CeilDiv(size_a, kTile), grid_z};
  mlir::MemRefType tile_type = WorkgroupMemRef(host.getContext(), {kTile * (kTile + 1)}, element);
  EmitLaunch(host, loc, "transpose_tiled", grid, {kTile, kRowsPerPass, 1}, {tile_type},
             [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value tile = wg[0];
               Value tx = k.ThreadId(0), ty = k.ThreadId(1);
               Value b0 = k.Mul(k.BlockId(0), k.Index(kTile)), a0 = k.Mul(k.BlockId(1), k.Index(kTile));
               auto slab = [&](Value z) {
                 // The batch index over batch_dims: x's and y's offsets of this slab.
                 Value rest = z, x_base = k.Index(0), y_base = k.Index(0);
                 for (auto it = batch_dims.rbegin(); it != batch_dims.rend(); ++it) {
                   Value dim = k.Index(x_shape[*it]);
                   Value idx = k.Rem(rest, dim);
                   rest = k.Div(rest, dim);
                   x_base = k.Add(x_base, k.Mul(idx, k.Index(x_strides[*it])));
                   y_base = k.Add(y_base, k.Mul(idx, k.Index(y_stride_of[*it])));
                 }
                 // Read rows of the tile along b: tile[r][c] = x[a0 + r][b0 + c].
                 for (int64_t pass = 0; pass < kTile / kRowsPerPass; ++pass) {
                   Value r = k.Add(ty, k.Index(pass * kRowsPerPass));
                   Value ia = k.Add(a0, r), ib = k.Add(b0, tx);
                   k.If(k.And(k.Lt(ia, k.Index(size_a)), k.Lt(ib, k.Index(size_b))), [&] {
                     Value from = k.Add(x_base, k.Add(k.Mul(ia, k.Index(x_strides[a])), ib));
                     k.Store(k.Load(x_flat, {from}), tile, {k.Add(k.Mul(r, k.Index(kTile + 1)), tx)});
                   });
                 }
                 k.Barrier();
                 // Write along a: y[.. b0 + r ..][a0 + c] = tile[c][r].
                 for (int64_t pass = 0; pass < kTile / kRowsPerPass; ++pass) {
                   Value r = k.Add(ty, k.Index(pass * kRowsPerPass));
                   Value ib = k.Add(b0, r), ia = k.Add(a0, tx);
                   k.If(k.And(k.Lt(ia, k.Index(size_a)), k.Lt(ib, k.Index(size_b))), [&] {
                     Value to = k.Add(y_base, k.Add(k.Mul(ib, k.Index(y_stride_of[b])), ia));
                     k.Store(k.Load(tile, {k.Add(k.Mul(tx, k.Index(kTile + 1)), r)}), y_flat, {to});
                   });
                 }
                 k.Barrier();  // the tile's readers are done before the next slab fills it
               };
               if (batch == 1) {
                 slab(k.Index(0));  // [1, 0]: one slab, no loop
               } else {
                 k.For(k.BlockId(2), k.Index(batch), k.Index(grid_z), slab);
               }
             });
}

}  // namespace

mlir::LogicalResult EmitLayout(lowering::OpLowering& lowering) {
  auto t = llvm::cast<gpt::TransposeOp>(lowering.op());
  auto type = llvm::cast<mlir::ShapedType>(t.getX().getType());
  if (!type.getElementType().isF32()) {
    return t.emitOpError("gpt-lower-to-gpu: the transpose kernels run f32 only, got ") << type.getElementType();
  }
  if (FoldsIntoMatmul(t)) return mlir::success();  // its matmuls read the input instead
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  Value x = lowering.operand(0), y = lowering.result(0);
  const llvm::ArrayRef<int64_t> x_shape = llvm::cast<mlir::MemRefType>(x.getType()).getShape();
  const llvm::ArrayRef<int64_t> y_shape = llvm::cast<mlir::MemRefType>(y.getType()).getShape();
  const llvm::ArrayRef<int64_t> perm = t.getPerm();
  Value x_flat = Flatten(host, loc, x), y_flat = Flatten(host, loc, y);
  if (!perm.empty() && perm.back() != static_cast<int64_t>(perm.size()) - 1) {
    EmitTiled(host, loc, x_flat, y_flat, x_shape, y_shape, perm, type.getElementType());
  } else {
    EmitGather(host, loc, x_flat, y_flat, x_shape, y_shape, perm);
  }
  return mlir::success();
}

}  // namespace gpt_sft::compiler::gpu_lowering
