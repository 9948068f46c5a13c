//===- matmul_kernels.cc - GPU kernels for gpt.matmul and its weight gradient -===//
//
// This file implements EmitMatmul with the tiled gemm (gemm.h):
//   gpt.matmul              y[M, N] = x[M, K] w[N, K]^T   (leading dims of x flattened to M)
//   gpt.matmul_weight_grad  dw[N, K] = dy[M, N]^T x[M, K]  (summed over every leading dim)
// The input gradient needs no kernel of its own: autodiff writes it as a gpt.matmul of dy
// with the transposed weight.
//
//===----------------------------------------------------------------------===//

#include "compiler/dialect/gpt_ops.h"
#include "compiler/lowering/gpu/gemm.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

int64_t LastDim(mlir::Value memref) {
  auto type = llvm::cast<mlir::MemRefType>(memref.getType());
  return type.getDimSize(type.getRank() - 1);
}

int64_t Rows(mlir::Value memref) {
  return llvm::cast<mlir::MemRefType>(memref.getType()).getNumElements() / LastDim(memref);
}

}  // namespace

mlir::LogicalResult EmitMatmul(lowering::OpLowering& lowering) {
  mlir::Operation* op = lowering.op();
  if (!llvm::cast<mlir::ShapedType>(op->getResult(0).getType()).getElementType().isF32()) {
    return op->emitOpError("gpt-lower-to-gpu: the matmul kernels run f32");
  }
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  GemmSpec spec;
  if (auto m = llvm::dyn_cast<gpt::MatmulOp>(op)) {
    mlir::Value x = lowering.BufferOf(m.getX()), w = lowering.BufferOf(m.getW());
    spec.name = "matmul";
    spec.M = Rows(x);
    spec.K = LastDim(x);
    spec.N = llvm::cast<mlir::MemRefType>(w.getType()).getDimSize(0);
    spec.a = {Flatten(host, loc, x), /*transposed=*/false};
    spec.b = {Flatten(host, loc, w), /*transposed=*/true};
  } else {
    auto g = llvm::cast<gpt::MatmulWeightGradOp>(op);
    mlir::Value dy = lowering.BufferOf(g.getDy()), x = lowering.BufferOf(g.getX());
    spec.name = "matmul_weight_grad";
    spec.M = LastDim(dy);  // dw's rows: dy's columns
    spec.N = LastDim(x);
    spec.K = Rows(x);      // summed over every token
    spec.a = {Flatten(host, loc, dy), /*transposed=*/true};
    spec.b = {Flatten(host, loc, x), /*transposed=*/false};
  }
  spec.c = Flatten(host, loc, lowering.result(0));
  EmitGemm(host, loc, spec);
  return mlir::success();
}

}  // namespace gpt_sft::compiler::gpu_lowering
