//===- layout_kernels.cc - GPU kernels for gpt.transpose ------------------===//
//
// This file implements EmitLayout. A transpose is one gather: a work-item per output
// element (grid-stride), its output index delinearised over the result's shape and
// mapped through the permutation to the input's flat index. Every read and write is a
// static-shape memref access, so the same code serves any rank.
//
//===----------------------------------------------------------------------===//

#include "compiler/dialect/gpt_ops.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"

namespace gpt_sft::compiler::gpu_lowering {

mlir::LogicalResult EmitLayout(lowering::OpLowering& lowering) {
  auto t = llvm::cast<gpt::TransposeOp>(lowering.op());
  mlir::OpBuilder& host = lowering.builder();
  mlir::Value x = lowering.operand(0), y = lowering.result(0);
  auto x_type = llvm::cast<mlir::MemRefType>(x.getType());
  auto y_type = llvm::cast<mlir::MemRefType>(y.getType());
  const llvm::ArrayRef<int64_t> perm = t.getPerm();
  const int64_t n = y_type.getNumElements();
  mlir::Value x_flat = Flatten(host, lowering.loc(), x), y_flat = Flatten(host, lowering.loc(), y);
  // Strides of the input, row-major.
  llvm::SmallVector<int64_t> x_strides(x_type.getRank(), 1);
  for (int64_t i = x_type.getRank() - 2; i >= 0; --i) x_strides[i] = x_strides[i + 1] * x_type.getDimSize(i + 1);
  const int64_t block = 256, grid = std::min<int64_t>(CeilDiv(n, block), 65535);
  EmitLaunch(host, lowering.loc(), "transpose", {grid, 1, 1}, {block, 1, 1}, {},
             [&](KernelBuilder& k, mlir::ValueRange) {
               k.For(k.GlobalId(), k.Index(n), k.Index(grid * block), [&](mlir::Value i) {
                 // Output index (i_0, ..., i_{r-1}) over y's shape; y dim d is x dim perm[d].
                 mlir::Value rest = i, src = k.Index(0);
                 for (int64_t d = y_type.getRank() - 1; d >= 0; --d) {
                   mlir::Value dim = k.Index(y_type.getDimSize(d));
                   mlir::Value idx = k.Rem(rest, dim);
                   rest = k.Div(rest, dim);
                   src = k.Add(src, k.Mul(idx, k.Index(x_strides[perm[d]])));
                 }
                 k.Store(k.Load(x_flat, {src}), y_flat, {i});
               });
             });
  return mlir::success();
}

}  // namespace gpt_sft::compiler::gpu_lowering
