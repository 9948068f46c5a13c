//===- rotary_kernels.cc - GPU kernels for gpt.rotary and its gradient -----===//
//
// This file implements EmitRotary. nanochat's rotary embedding on x [B, T, H, D] with
// per-token positions [B, T] (or t itself when the op has none): with x1 = x[..., :D/2],
// x2 = x[..., D/2:] and angle = pos / base^(2j/D), y1 = x1 cos + x2 sin and
// y2 = -x1 sin + x2 cos; the gradient rotates the other way (sin negated).
// cos and sin come from nanochat's bf16 tables (model/rotary_table.h, the function
// the CPU kernels call per token), [T, D/2] each, as constants of the artifact (one pair for
// all the rotary ops of a model, with or without round_bf16: OpLowering::Constant shares
// equal values): the kernels read exactly the interpreter's values, and a GPU never evaluates
// a large angle in fp32. Positions are then indices into the tables. The bound relied on:
// positions lie in [0, T). The interpreter's CPU kernel has no table, so it implies none (the
// compiled cpu step's tabled builtin does, as here: lowering/rotary_table_constants.h); the
// batches a compiled step sees do: a packed row's positions restart at 0 per conversation and count up
// by 1 (data/collate/batch.h checks it), a padded row's are t, so both stay below T.
// (nanochat's cache of T * 10 positions serves generation, which runs on the interpreter.)
// The positions argument carries [0, T) as its valid range, which the runtime checks on
// upload, so a larger position is an error, not a wild read.
// One work-item per (token, head, pair j): both halves of the pair.
// With round_bf16 (nanochat's bf16 rotary) every product and sum is rounded to bf16 in the
// kernel (EmitRoundToBf16, the fusions' integer rounding); without it they are f32 ops.
//
//===----------------------------------------------------------------------===//

#include <algorithm>

#include "ir/gpt_ops.h"
#include "compiler/lowering/rotary_table_constants.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "compiler/transforms/elementwise_scalar.h"

namespace gpt_sft::compiler::gpu_lowering {
using ::mlir::Value;

mlir::LogicalResult EmitRotary(lowering::OpLowering& lowering) {
  mlir::Operation* op = lowering.op();
  const bool grad = llvm::isa<gpt::RotaryGradOp>(op);
  Value positions_tensor = grad ? llvm::cast<gpt::RotaryGradOp>(op).getPositions()
                                : llvm::cast<gpt::RotaryOp>(op).getPositions();
  const double base = grad ? llvm::cast<gpt::RotaryGradOp>(op).getBase().convertToDouble()
                           : llvm::cast<gpt::RotaryOp>(op).getBase().convertToDouble();
  const bool bf16 = grad ? llvm::cast<gpt::RotaryGradOp>(op).getRoundBf16() : llvm::cast<gpt::RotaryOp>(op).getRoundBf16();
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  auto type = llvm::cast<mlir::MemRefType>(lowering.operand(0).getType());
  if (!llvm::cast<mlir::ShapedType>(op->getOperand(0).getType()).getElementType().isF32()) {
    return op->emitOpError("gpt-lower-to-gpu: the rotary kernels run f32");
  }
  const int64_t B = type.getDimSize(0), T = type.getDimSize(1), H = type.getDimSize(2), D = type.getDimSize(3);
  const int64_t half = D / 2;
  Value x = Flatten(host, loc, lowering.operand(0));
  Value y = Flatten(host, loc, lowering.result(0));
  Value positions = positions_tensor ? Flatten(host, loc, lowering.BufferOf(positions_tensor)) : Value();
  if (positions_tensor) lowering.RequireArgumentRange(positions_tensor, 0, T);
  mlir::MLIRContext* ctx = host.getContext();
  const lowering::RotaryTableConstants tables = lowering::MakeRotaryTableConstants(ctx, T, D, base);
  Value cos = Flatten(host, loc, lowering.Constant(tables.cos));
  Value sin = Flatten(host, loc, lowering.Constant(tables.sin));
  const int64_t n = B * T * H * half, block = 256, grid = std::min<int64_t>(CeilDiv(n, block), 65535);
  const std::string name = std::string(grad ? "rotary_grad" : "rotary") + (bf16 ? "_bf16" : "");
  EmitLaunch(host, loc, name, {grid, 1, 1}, {block, 1, 1}, {},
             [&](KernelBuilder& k, mlir::ValueRange) {
               k.For(k.GlobalId(), k.Index(n), k.Index(grid * block), [&](Value i) {
                 Value j = k.Rem(i, k.Index(half));
                 Value bth = k.Div(i, k.Index(half));  // (b * T + t) * H + h
                 Value bt = k.Div(bth, k.Index(H));
                 Value pos = positions ? k.IndexFromI32(k.Load(positions, {bt})) : k.Rem(bt, k.Index(T));
                 Value at = k.Add(k.Mul(pos, k.Index(half)), j);
                 Value c = k.Load(cos, {at}), s = k.Load(sin, {at});
                 if (grad) s = k.FNeg(s);
                 Value o = k.Add(k.Mul(bth, k.Index(D)), j);
                 Value o2 = k.Add(o, k.Index(half));
                 Value x1 = k.Load(x, {o}), x2 = k.Load(x, {o2});
                 // Without bf16 rounding `r` is the identity.
                 auto r = [&](Value v) { return bf16 ? EmitRoundToBf16(k.b(), loc, v) : v; };
                 k.Store(r(k.FAdd(r(k.FMul(x1, c)), r(k.FMul(x2, s)))), y, {o});
                 k.Store(r(k.FSub(r(k.FMul(x2, c)), r(k.FMul(x1, s)))), y, {o2});
               });
             });
  return mlir::success();
}

}  // namespace gpt_sft::compiler::gpu_lowering
