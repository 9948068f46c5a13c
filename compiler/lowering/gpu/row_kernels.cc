//===- row_kernels.cc - GPU kernels for rows: RMSNorm, cross-entropy ------===//
//
// This file implements EmitRowKernels, which hands each op to its family, and the
// workgroup shape the families share (row_kernels.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/row_kernels.h"

#include "ir/gpt_ops.h"
#include "compiler/lowering/gpu/gpu_kernels.h"

namespace gpt_sft::compiler::gpu_lowering {

Dims RowsBlock(int64_t dim) {
  int64_t x = 8;
  while (x < dim && x < 256) x *= 2;
  return {x, x >= 128 ? 1 : 128 / x, 1};
}

RowPlace PlaceInRows(KernelBuilder& k, int64_t rows, int64_t dim) {
  const int64_t per_group = k.block()[1];
  RowPlace place;
  place.row = per_group == 1 ? k.BlockId(0) : k.Add(k.Mul(k.BlockId(0), k.Index(per_group)), k.ThreadId(1));
  place.begin = k.Mul(place.row, k.Index(dim));
  place.valid = k.Lt(place.row, k.Index(rows));
  // Every row exists when the workgroups tile the rows exactly.
  place.end = rows % per_group == 0 ? k.Index(dim) : k.Select(place.valid, k.Index(dim), k.Index(0));
  return place;
}

mlir::LogicalResult EmitRowKernels(lowering::OpLowering& lowering) {
  if (llvm::isa<gpt::RmsNormOp, gpt::RmsNormGradOp>(lowering.op())) return EmitRmsNorm(lowering);
  return EmitCrossEntropy(lowering);
}

}  // namespace gpt_sft::compiler::gpu_lowering
