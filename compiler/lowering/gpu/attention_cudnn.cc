//===- attention_cudnn.cc - attention as cuDNN's fused SDPA builtins ------===//
//
// This file implements EmitCudnnAttention (gpt-lower-to-gpu{attention=cudnn}): gpt.attention
// and gpt.attention_grad become the cuda driver's builtins (runtime/device/SDPA_BUILTIN.md)
//
//   sdpa_fwd.cudnn (B, T, H, Hkv, D, dtype, causal; scale; q, k, v -> out, lse)
//   sdpa_bwd.cudnn (B, T, H, Hkv, D, dtype, causal; scale; q, k, v, out, dout, lse -> dq, dk, dv)
//
// in the op's own layouts (q, out [B,T,H,D]; k, v [B,T,Hkv,D]; lse [B,H,T] f32), which cuDNN
// reads through strides, so no transpose runs around it. lse is the generated kernels' (the
// natural log-sum-exp of the scaled scores, cuDNN's "stats"), kept for the entry point under
// the forward's result, so a backward of the same operands reads it and otherwise recomputes
// it with a forward into scratch, as the generated path does.
//
// The backward with GQA (H > Hkv) keeps the generated kernels too: the driver's backward graph
// does not yet sum dK and dV over the query heads of a kv head.
//
// Packed rows keep the generated kernels: a row holds a data-dependent number of documents,
// while cuDNN's variable-length attention (ragged offsets, per-sequence lengths) needs one
// sequence per batch entry and a batch size fixed when its plan is built; expressing
// segment ids would mean splitting rows into documents on the device every step. The lowering
// says so with a remark at the op, and the artifact's description names the fallback.
//
//===----------------------------------------------------------------------===//

#include <cmath>
#include <initializer_list>

#include "ir/gpt_ops.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;

/// The builtins' `dtype` scalar: a mask whose bit i says the i-th of q, k, v, out, dout, dq,
/// dk, dv (in that order; the forward names the first four) is stored as bf16, else f32. Under
/// bf16 storage q, k and v are bf16 buffers while out and the gradients stay f32, so the mask
/// is read off the buffers, never the tensor types (f32 either way). cuDNN computes on bf16
/// values; the driver rounds the f32 ones into staging.
int64_t Bf16StorageMask(std::initializer_list<Value> buffers) {
  int64_t mask = 0, bit = 0;
  for (Value buffer : buffers) {
    if (IsBf16Storage(buffer.getType())) mask |= int64_t{1} << bit;
    ++bit;
  }
  return mask;
}

struct SdpaShape {
  int64_t B = 0, T = 0, H = 0, Hkv = 0, D = 0;
  double scale = 0;
};

/// The shape of `op`'s q and k, or a diagnostic for what the builtins do not take.
template <typename Op>
mlir::FailureOr<SdpaShape> ShapeOf(Op op) {
  auto q = llvm::cast<mlir::ShapedType>(op.getQ().getType());
  auto k = llvm::cast<mlir::ShapedType>(op.getK().getType());
  SdpaShape s{q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), k.getDimSize(2), q.getDimSize(3)};
  s.scale = op.getScale() ? op.getScale()->convertToDouble() : 1.0 / std::sqrt(static_cast<double>(s.D));
  if (!op.getCausal()) {
    return op.emitOpError("gpt-lower-to-gpu{attention=cudnn}: the sdpa builtins run causal attention");
  }
  if (s.Hkv < 1 || s.H % s.Hkv != 0) {
    return op.emitOpError("gpt-lower-to-gpu{attention=cudnn}: cuDNN's GQA needs H a multiple of Hkv, got H=")
           << s.H << " Hkv=" << s.Hkv;
  }
  if (!q.getElementType().isF32()) {
    return op.emitOpError("gpt-lower-to-gpu{attention=cudnn}: the sdpa builtins read f32 or bf16 buffers, got ") << q;
  }
  return s;
}

llvm::SmallVector<Value> Scalars(lowering::OpLowering& lowering, const SdpaShape& s, int64_t bf16_mask) {
  return {lowering.I64(s.B), lowering.I64(s.T),         lowering.I64(s.H), lowering.I64(s.Hkv),
          lowering.I64(s.D), lowering.I64(bf16_mask), lowering.I64(1),   lowering.F64(s.scale)};
}

mlir::MemRefType LseType(mlir::OpBuilder& host, const SdpaShape& s) {
  return mlir::MemRefType::get({s.B, s.H, s.T}, host.getF32Type());
}

void CallForward(lowering::OpLowering& lowering, const SdpaShape& s, Value q, Value k, Value v, Value out, Value lse) {
  llvm::SmallVector<Value> args = Scalars(lowering, s, Bf16StorageMask({q, k, v, out}));
  args.append({q, k, v, out, lse});
  lowering.builder().create<gpt::CallBuiltinOp>(lowering.loc(), lowering.builder().getStringAttr("sdpa_fwd.cudnn"),
                                                args);
}

/// The lse a forward of the same operands kept (the rule of the generated path), or null.
Value ForwardLse(lowering::OpLowering& lowering, gpt::AttentionGradOp grad) {
  auto fwd = grad.getOut().getDefiningOp<gpt::AttentionOp>();
  if (!fwd || fwd.getQ() != grad.getQ() || fwd.getK() != grad.getK() || fwd.getV() != grad.getV() ||
      fwd.getSegmentIds() != grad.getSegmentIds() || fwd.getCausal() != grad.getCausal() ||
      fwd.getScaleAttr() != grad.getScaleAttr()) {
    return nullptr;
  }
  return lowering.FindPersistent(fwd.getResult());
}

mlir::LogicalResult EmitForward(lowering::OpLowering& lowering, gpt::AttentionOp op) {
  mlir::FailureOr<SdpaShape> s = ShapeOf(op);
  if (failed(s)) return mlir::failure();
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  auto flat = [&](Value v) { return Flatten(host, loc, v); };
  Value lse = flat(lowering.Persistent(LseType(host, *s), op.getResult()));
  CallForward(lowering, *s, flat(lowering.BufferOf(op.getQ())), flat(lowering.BufferOf(op.getK())),
              flat(lowering.BufferOf(op.getV())), flat(lowering.result(0)), lse);
  return mlir::success();
}

mlir::LogicalResult EmitBackward(lowering::OpLowering& lowering, gpt::AttentionGradOp op) {
  mlir::FailureOr<SdpaShape> s = ShapeOf(op);
  if (failed(s)) return mlir::failure();
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  auto flat = [&](Value v) { return Flatten(host, loc, v); };
  Value q = flat(lowering.BufferOf(op.getQ())), k = flat(lowering.BufferOf(op.getK())),
        v = flat(lowering.BufferOf(op.getV()));
  Value lse = ForwardLse(lowering, op);
  if (lse) {
    lse = flat(lse);
  } else {
    // Recompute the forward for its lse only; the backward reads `out` as given.
    Value recomputed = lowering.Scratch(mlir::MemRefType::get({s->B * s->T * s->H * s->D},
                                                              llvm::cast<mlir::ShapedType>(op.getQ().getType())
                                                                  .getElementType()));
    lse = flat(lowering.Scratch(LseType(host, *s)));
    CallForward(lowering, *s, q, k, v, recomputed, lse);
  }
  Value out = flat(lowering.BufferOf(op.getOut())), dout = flat(lowering.BufferOf(op.getDout()));
  Value dq = flat(lowering.result(0)), dk = flat(lowering.result(1)), dv = flat(lowering.result(2));
  llvm::SmallVector<Value> args = Scalars(lowering, *s, Bf16StorageMask({q, k, v, out, dout, dq, dk, dv}));
  args.append({q, k, v, out, dout, lse, dq, dk, dv});
  host.create<gpt::CallBuiltinOp>(loc, host.getStringAttr("sdpa_bwd.cudnn"), args);
  return mlir::success();
}

}  // namespace

mlir::LogicalResult EmitCudnnAttention(lowering::OpLowering& lowering, const GpuLoweringOptions& options) {
  mlir::Operation* op = lowering.op();
  mlir::Value segments = llvm::isa<gpt::AttentionOp>(op) ? llvm::cast<gpt::AttentionOp>(op).getSegmentIds()
                                                           : llvm::cast<gpt::AttentionGradOp>(op).getSegmentIds();
  if (segments) {
    op->emitRemark(
        "gpt-lower-to-gpu{attention=cudnn}: packed rows (segment ids) run the generated attention kernels: cuDNN's "
        "variable-length attention cannot express a row's documents");
    return EmitAttention(lowering, options);
  }
  if (auto fwd = llvm::dyn_cast<gpt::AttentionOp>(op)) return EmitForward(lowering, fwd);
  auto grad = llvm::cast<gpt::AttentionGradOp>(op);
  if (llvm::cast<mlir::ShapedType>(grad.getQ().getType()).getDimSize(2) !=
      llvm::cast<mlir::ShapedType>(grad.getK().getType()).getDimSize(2)) {
    // The driver's backward graph has no reduction across query heads yet; the generated
    // backward reads the lse cuDNN's forward kept (the same convention, the same key).
    op->emitRemark(
        "gpt-lower-to-gpu{attention=cudnn}: the GQA backward runs the generated attention kernels (the cuda driver's "
        "cuDNN backward graph covers H == Hkv)");
    return EmitAttention(lowering, options);
  }
  return EmitBackward(lowering, grad);
}

}  // namespace gpt_sft::compiler::gpu_lowering
