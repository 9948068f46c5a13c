//===- lower_to_cpu_pass.cc - gpt-lower-to-cpu ----------------------------===//
//
// This file implements the cpu target's lowering: every planned entry point becomes its
// launch schedule (LowerPlannedFunction, 64-byte buffers) where
//   * a fusion (a linalg.generic that CompileFusionKernels tagged gpt.kernel) is a
//     gpt.launch_host_kernel of its compiled range kernel over its elements;
//   * every other op is a gpt.call_builtin of the cpu driver's library kernel
//     (runtime/device/cpu/BUILTINS.md: the name "cpu.<op>.<f32|f64>", the dims and
//     attributes as scalars first, then the buffers); the micro-kernel families (ukernel/:
//     cpu.gemm, cpu.norm, cpu.rotary, cpu.attention) take their params first and carry them in words
//     (gpt.ukernel) for readers of the IR;
//   * rotary rotates by nanochat's cos/sin tables baked in as constants (cpu.rotary), and a
//     rotary with its QK-norm right after it is one pass (op rotary_rms_norm; under bf16
//     autocast with the norm's rounding, flag bf16), as is the norm's gradient with the
//     rotary's (op rms_norm_rotary_grad);
//   * the lm_head's matmul, softcap, loss and their VJP down to dx are one launch
//     (linear_loss_fusion.h: the logits are never written), under bf16 autocast too, where
//     dy is written prepared for the bf16 weight gradient that reads it when nothing else
//     does (its cpu.gemm reads it prepared or in slabs);
//   * an entry point's muon_updates of one shape are one launch that runs their matrices in
//     parallel (muon_group_fusion.h);
//   * every product of matrices is one launch of the GEMM family (`cpu.gemm`, ukernel/gemm.h),
//     its variant named by params, not by the builtin's name: under bf16 autocast a matmul
//     whose only reader is a lone rounding (a fusion of gpt.round_bf16 alone) right after it,
//     or a few ops later with none of those touching the rounding's bytes, rounds as it writes
//     (flag round), absorbing it; a block's output projection takes the residual add (and its
//     roundings) and the next rms_norm as its epilogue (residual_rms_norm); a matmul with the
//     relu_square right after it squares each row block while in cache (relu_square); the
//     MLP's relu² backward is the epilogue of the product that makes its cotangent
//     (relu_square_grad); a value only bf16 GEMMs read (a block's norm, the MLP's hidden
//     activation and its gradient) is written prepared for them by its producer
//     (prepared_out) and read so (prepared_a, prepared_b); a transpose of a weight read only
//     by matmuls is never made: they multiply by the weight itself (form dyw, the same bits);
//   * rms_norm and rms_norm_grad absorb a lone rounding after them too (cpu.norm flag round),
//     and a lone rounding whose only reader is the rms_norm_grad right after it (as dy) is
//     that gradient's prologue (flag round_dy: the bf16 QK-norm's backward);
//   * a softcap with the cross_entropy of its result right after it is one pass
//     (softcap_cross_entropy; nanochat's bf16 softcap: softcap_bf16_cross_entropy, absorbing
//     the rounding of the logits before it too, and in the backward the rounding of the loss
//     gradient between it and the softcap's gradient); a residual add with the rms_norm of its
//     sum right after it too (cpu.norm op add_rms_norm), and an rms_norm_grad with the add that
//     joins it to the residual gradient (op rms_norm_grad_add); a run of adds (the gradient accumulation's) is
//     one add_list launch;
//   * the compiler's decisions the runtime used to make at load: the softcap gradient fused
//     into the cross-entropy's (softcap_epilogue.h), attention's log-sum-exp kept for the
//     backward (Persistent) or recomputed into scratch, positions 0..T-1 as a constant when
//     rotary has none, the transpose's dims and permutation, copies for reshapes.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/cpu/lower_to_cpu_pass.h"

#include <array>
#include <string>
#include <type_traits>

#include "ir/autocast.h"
#include "ir/fusion_label.h"
#include "ir/gpt_ops.h"
#include "compiler/lowering/collective_lowering.h"
#include "compiler/lowering/cpu/linear_loss_fusion.h"
#include "compiler/lowering/cpu/ukernel_launch.h"
#include "compiler/lowering/muon_group_fusion.h"
#include "compiler/lowering/planned_function.h"
#include "compiler/lowering/rotary_table_constants.h"
#include "compiler/lowering/softcap_epilogue.h"
#include "ukernel/attention.h"
#include "ukernel/gemm.h"
#include "ukernel/norm.h"
#include "ukernel/rotary.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace gpt_sft::compiler {
namespace {

using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::success;
using ::mlir::Value;
using lowering::OpLowering;
using lowering::DisjointBytes;

constexpr int64_t kCpuBufferAlignment = 64;
/// rms_norm_grad_add's rows live on its stack (runtime/kernels/cpu/residual_rms_norm.h).
constexpr int64_t kMaxResidualRmsNormDim = 4096;
/// add_list takes at most this many adds (runtime/device/cpu/host_builtins.cc).
constexpr int64_t kMaxAddList = 1024;

mlir::ShapedType TypeOf(Value v) { return llvm::cast<mlir::ShapedType>(v.getType()); }
int64_t Dim(Value v, int64_t i) { return TypeOf(v).getDimSize(i < 0 ? TypeOf(v).getRank() + i : i); }
int64_t Elements(Value v) { return TypeOf(v).getNumElements(); }
int64_t Rows(Value v) { return Elements(v) / Dim(v, -1); }

/// The op after `op`, past any ops of the kinds `Skipped` (the fusions' tensor.empty
/// placeholders, or reshapes, which the plan makes views).
template <typename... Skipped>
mlir::Operation* NextPast(mlir::Operation* op) {
  mlir::Operation* next = op->getNextNode();
  while (llvm::isa_and_nonnull<Skipped...>(next)) next = next->getNextNode();
  return next;
}

/// Emits gpt.call_builtin `name` with the scalars (i64 ints, f64 floats) then the buffers.
LogicalResult Call(OpLowering& l, const std::string& name, llvm::ArrayRef<int64_t> ints, llvm::ArrayRef<double> floats,
                   llvm::ArrayRef<Value> buffers) {
  if (name.empty()) return l.op()->emitOpError("the cpu target runs f32 and f64 tensors");
  llvm::SmallVector<Value> args;
  for (int64_t i : ints) args.push_back(l.I64(i));
  for (double f : floats) args.push_back(l.F64(f));
  args.append(buffers.begin(), buffers.end());
  l.builder().create<gpt::CallBuiltinOp>(l.loc(), l.builder().getStringAttr(name), args);
  return success();
}

using ukernel::GemmEpilogue;
using ukernel::GemmForm;
using ukernel::GemmSlot;
using ukernel::NormOp;
using ukernel::RotaryOp;
using lowering::AttentionBuffers;
using lowering::CallAttention;
using lowering::CallGemm;
using lowering::CallNorm;
using lowering::CallRotary;
using lowering::CpuBuiltinName;
using lowering::GemmBuffers;

/// rms_norm-family params over the rows of `x`.
ukernel::NormParams NormOver(NormOp op, int64_t flags, Value x, double eps) {
  return {op, flags, Rows(x), Dim(x, -1), eps};
}

/// The flag bit `bit` when `on`.
int64_t FlagIf(bool on, int64_t bit) { return on ? bit : 0; }

LogicalResult LowerFusion(OpLowering& l, mlir::linalg::GenericOp generic) {
  auto symbol = generic->getAttrOfType<mlir::StringAttr>("gpt.kernel");
  if (!symbol) return generic.emitOpError("names no compiled kernel (gpt.kernel): run CompileFusionKernels first");
  llvm::SmallVector<Value> buffers;
  for (Value in : generic.getDpsInputs()) buffers.push_back(l.BufferOf(in));
  for (unsigned i = 0; i < generic.getNumResults(); ++i) buffers.push_back(l.result(i));
  l.builder().create<gpt::LaunchHostKernelOp>(l.loc(), mlir::FlatSymbolRefAttr::get(symbol),
                                              l.builder().getI64IntegerAttr(Elements(generic.getResult(0))), buffers);
  return success();
}

/// Positions 0..T-1 in every row, [B, T] i32, for a rotary without positions.
Value Iota(OpLowering& l, int64_t B, int64_t T) {
  std::vector<int32_t> values(B * T);
  for (int64_t i = 0; i < B * T; ++i) values[i] = static_cast<int32_t>(i % T);
  auto type = mlir::RankedTensorType::get({B, T}, l.builder().getI32Type());
  return l.Constant(mlir::DenseElementsAttr::get(type, llvm::ArrayRef<int32_t>(values)));
}

/// Whether the kernels may read `a` and write `b` row by row: their bytes are the same or
/// disjoint, never a partial overlap. Both outside the arena (arguments, constants): only
/// when they are the same value (two views of one argument are not told apart: no).
bool SameOrDisjointBytes(OpLowering& l, Value a, Value b) {
  const auto pa = l.PlannedArenaBytes(a), pb = l.PlannedArenaBytes(b);
  if (pa && pb) return *pa == *pb || pa->second <= pb->first || pb->second <= pa->first;
  if (pa || pb) return true;
  return a == b;
}

/// How far after a launch an op it computes as its epilogue (a rounding, the relu² backward)
/// may stand (ops between, tensor.empty aside).
constexpr int kMaxOpsBeforeEpilogue = 8;

/// Whether `op` reads or writes no byte of `bytes`' buffer (every operand and result
/// disjoint from it).
bool TouchesNoByteOf(OpLowering& l, mlir::Operation* op, Value bytes) {
  for (Value v : op->getOperands()) {
    if (llvm::isa<mlir::RankedTensorType>(v.getType()) && !v.getDefiningOp<mlir::tensor::EmptyOp>() &&
        !DisjointBytes(l, v, bytes)) {
      return false;
    }
  }
  for (Value v : op->getResults()) {
    if (!DisjointBytes(l, v, bytes)) return false;
  }
  return true;
}

/// Whether an op's result computed early, by a launch at `launch` instead of at `later` (a few
/// ops on at most), stays right: no op between (tensor.empty and `views` aside) touches
/// `written`'s bytes, which the launch fills early, nor writes `read`'s (if given), which the
/// launch reads early.
bool ComputableEarly(OpLowering& l, mlir::Operation* launch, mlir::Operation* later, Value written, Value read = {},
                     const llvm::SmallPtrSetImpl<mlir::Operation*>* views = nullptr) {
  int between = 0;
  for (mlir::Operation* op = launch->getNextNode(); op != later; op = op->getNextNode()) {
    if (op == nullptr) return false;
    // gpt-lower-fusions puts each generic's placeholder output (tensor.empty) before it.
    if (llvm::isa<mlir::tensor::EmptyOp>(op) || (views != nullptr && views->contains(op))) continue;
    if (++between > kMaxOpsBeforeEpilogue || !TouchesNoByteOf(l, op, written)) return false;
    if (read) {
      for (Value result : op->getResults()) {
        if (!DisjointBytes(l, result, read)) return false;
      }
    }
  }
  return true;
}

/// `v` read through the reshapes after it that are views (its only reader a reshape the plan
/// gives the same bytes, and so on): the value its readers see, the same bytes. Those
/// reshapes (they launch nothing) go into `views` when given.
Value ThroughViewReshapes(OpLowering& l, Value v, llvm::SmallPtrSetImpl<mlir::Operation*>* views = nullptr) {
  while (v.hasOneUse()) {
    auto reshape = llvm::dyn_cast<gpt::ReshapeOp>(*v.getUsers().begin());
    if (!reshape) break;
    const auto from = l.PlannedArenaBytes(v), to = l.PlannedArenaBytes(reshape.getResult());
    if (!from || !to || *from != *to) break;
    if (views != nullptr) views->insert(reshape);
    v = reshape.getResult();
  }
  return v;
}

/// The lone autocast rounding (a fusion of gpt.round_bf16 alone) that a launch computing
/// `result` can apply as its epilogue: `result`'s only reader (through views), a few ops later at most (the
/// backward puts the weight gradient between a matmul and the rounding of its result), none
/// of those between touching the rounding's bytes. The launch then writes the rounded values
/// straight into the fusion's buffer, earlier than the plan has it, which is why nothing in
/// between may use those bytes, and why they must share no byte with what the launch reads
/// (`inputs`).
mlir::linalg::GenericOp RoundingAfter(OpLowering& l, Value result, llvm::ArrayRef<Value> inputs) {
  // The rounding may read `result` through reshapes that are views (the plan gives them its
  // bytes, so they launch nothing and copy nothing that the epilogue would not write).
  // (A reshape that is not a view stays `read`'s reader, which then is no rounding.)
  llvm::SmallPtrSet<mlir::Operation*, 4> views;
  const Value read = ThroughViewReshapes(l, result, &views);
  if (!read.hasOneUse()) return {};
  auto round = llvm::dyn_cast<mlir::linalg::GenericOp>(*read.getUsers().begin());
  if (!round || round->getBlock() != result.getDefiningOp()->getBlock()) return {};
  auto ops = round->getAttrOfType<mlir::StringAttr>(kFusionOpsAttr);
  if (!ops || ops.getValue() != "round_bf16" || round.getDpsInputs().size() != 1 ||
      round.getDpsInputs()[0] != read || round.getNumResults() != 1) {
    return {};
  }
  const Value rounded = round.getResult(0);
  for (Value in : inputs) {
    if (!DisjointBytes(l, in, rounded)) return {};
  }
  if (!ComputableEarly(l, result.getDefiningOp(), round, rounded, /*read=*/{}, &views)) return {};
  return round;
}

/// The rms_norm a rotary's QK-norm fusion absorbs: the very next op, norming the rotary's
/// result over its head dim, with the rotary's input, result and the norm's result each the
/// same bytes as another or disjoint (rotary_rms_norm works one head row at a time).
gpt::RmsNormOp QkNormAfter(OpLowering& l, gpt::RotaryOp r) {
  auto norm = llvm::dyn_cast_or_null<gpt::RmsNormOp>(r->getNextNode());
  if (!norm || norm.getX() != r.getResult() || r.getRoundBf16()) return {};
  Value x = r.getX(), rot = r.getResult(), y = norm.getResult();
  if (!SameOrDisjointBytes(l, x, y) || !SameOrDisjointBytes(l, rot, y) || !SameOrDisjointBytes(l, x, rot)) return {};
  return norm;
}

/// Under bf16 autocast the QK-norm is the bf16 rotary, rms_norm and the lone rounding of the
/// norm's result: the norm (the very next op, norming the rotary's result) and that rounding,
/// when x, rot and the rounded result are pairwise the same bytes or disjoint; else nulls.
std::pair<gpt::RmsNormOp, mlir::linalg::GenericOp> RoundedQkNormAfter(OpLowering& l, gpt::RotaryOp r) {
  auto norm = llvm::dyn_cast_or_null<gpt::RmsNormOp>(r->getNextNode());
  if (!norm || norm.getX() != r.getResult() || !r.getRoundBf16()) return {};
  if (!TypeOf(r.getX()).getElementType().isF32() || !UnderBf16Autocast(norm)) return {};
  mlir::linalg::GenericOp round = RoundingAfter(l, norm.getResult(), {r.getX(), r.getResult()});
  if (!round) return {};
  Value x = r.getX(), rot = r.getResult(), y = round.getResult(0);
  if (!SameOrDisjointBytes(l, x, y) || !SameOrDisjointBytes(l, rot, y) || !SameOrDisjointBytes(l, x, rot)) return {};
  return {norm, round};
}

/// The rotary_grad that a QK-norm's rms_norm_grad absorbs: the very next op and the only
/// user of the gradient, rotating it back; rot, dy and the rotary_grad's result the same
/// bytes or disjoint.
gpt::RotaryGradOp RotaryGradAfter(OpLowering& l, gpt::RmsNormGradOp n) {
  auto grad = llvm::dyn_cast_or_null<gpt::RotaryGradOp>(n->getNextNode());
  if (!grad || grad.getDy() != n.getResult() || !n.getResult().hasOneUse() || grad.getRoundBf16()) return {};
  if (TypeOf(n.getX()).getRank() != 4) return {};
  Value dx = grad.getResult();
  if (!SameOrDisjointBytes(l, n.getX(), dx) || !SameOrDisjointBytes(l, n.getDy(), dx)) return {};
  return grad;
}

/// The rms_norm a residual add's fusion absorbs: the very next op, norming the sum (same
/// type as the add's operands), every pair of a, b, sum and the norm's result the same bytes
/// or disjoint (add_rms_norm works one row at a time).
gpt::RmsNormOp NormAfter(OpLowering& l, gpt::AddOp add) {
  auto norm = llvm::dyn_cast_or_null<gpt::RmsNormOp>(add->getNextNode());
  if (!norm || norm.getX() != add.getResult()) return {};
  if (add.getLhs().getType() != add.getResult().getType() || add.getRhs().getType() != add.getResult().getType()) {
    return {};
  }
  const Value y = norm.getResult();
  for (Value v : {Value(add.getLhs()), Value(add.getRhs()), Value(add.getResult())}) {
    if (!SameOrDisjointBytes(l, v, y)) return {};
  }
  if (!SameOrDisjointBytes(l, add.getLhs(), add.getResult()) || !SameOrDisjointBytes(l, add.getRhs(), add.getResult())) {
    return {};
  }
  return norm;
}

/// `add` and the adds right after it (the gradient accumulation's, one per parameter), as one
/// add_list launch: each an elementwise add of one element type whose sum no rms_norm reads
/// right after it (that add fuses with its norm instead). add_list runs them one after
/// another in this order, so one may read another's sum, as separate launches could.
llvm::SmallVector<gpt::AddOp> AddRunFrom(OpLowering& l, gpt::AddOp add) {
  auto plain = [&](gpt::AddOp a) {
    const mlir::Type t = a.getResult().getType();
    return a.getLhs().getType() == t && a.getRhs().getType() == t &&
           TypeOf(a.getResult()).getElementType() == TypeOf(add.getResult()).getElementType() && !NormAfter(l, a);
  };
  llvm::SmallVector<gpt::AddOp> run;
  if (!plain(add)) return run;
  run.push_back(add);
  for (auto next = llvm::dyn_cast_or_null<gpt::AddOp>(add->getNextNode());
       next && plain(next) && static_cast<int64_t>(run.size()) < kMaxAddList;
       next = llvm::dyn_cast_or_null<gpt::AddOp>(next->getNextNode())) {
    run.push_back(next);
  }
  return run;
}

/// Whether an add of `a` and `b` into `out` (right after rms_norm_grad `n`) joins the norm's
/// gradient g to the residual gradient in one launch: g one of the two and the add its only
/// user, the other (r) of the same type, out of g's type, the norm's rows at most
/// kMaxResidualRmsNormDim long (the kernel's stack row), every pair of x, dy, r and out the
/// same bytes or disjoint.
bool JoinsNormGradToResidual(OpLowering& l, gpt::RmsNormGradOp n, Value a, Value b, Value out) {
  const Value g = n.getResult();
  if (!g.hasOneUse() || (a != g && b != g) || a == b) return false;
  if (a.getType() != b.getType() || out.getType() != g.getType()) return false;
  if (Dim(n.getX(), -1) > kMaxResidualRmsNormDim) return false;
  const Value r = a == g ? b : a;
  for (Value v : {Value(n.getX()), Value(n.getDy()), r}) {
    if (!SameOrDisjointBytes(l, v, out)) return false;
  }
  return true;
}

/// The gpt.add that joins an rms_norm_grad's result to the residual gradient: the very next
/// op, when JoinsNormGradToResidual.
gpt::AddOp ResidualAddAfter(OpLowering& l, gpt::RmsNormGradOp n) {
  auto add = llvm::dyn_cast_or_null<gpt::AddOp>(n->getNextNode());
  if (!add || !JoinsNormGradToResidual(l, n, add.getLhs(), add.getRhs(), add.getResult())) return {};
  return add;
}

/// Under bf16 autocast the same join as a fusion: the very next op (tensor.empty aside), the
/// gpt.fusion_ops "add,round_bf16" of its two inputs, when JoinsNormGradToResidual.
mlir::linalg::GenericOp ResidualAddRoundAfter(OpLowering& l, gpt::RmsNormGradOp n) {
  auto add = llvm::dyn_cast_or_null<mlir::linalg::GenericOp>(NextPast<mlir::tensor::EmptyOp>(n));
  if (!add) return {};
  auto ops = add->getAttrOfType<mlir::StringAttr>(kFusionOpsAttr);
  if (!ops || ops.getValue() != "add,round_bf16" || add.getDpsInputs().size() != 2 || add.getNumResults() != 1) {
    return {};
  }
  if (!JoinsNormGradToResidual(l, n, add.getDpsInputs()[0], add.getDpsInputs()[1], add.getResult(0))) return {};
  return add;
}

/// Rotary reads nanochat's cos/sin tables for positions 0..T-1, computed here once and
/// carried as constants (one pair for every rotary of the step: OpLowering::Constant shares
/// equal values), instead of each token evaluating cos and sin at run time: the builtin
/// rotary_tables / rotary_grad_tables (+ _bf16 for round_bf16) computes the same bits as the
/// interpreter's rotary. The positions argument carries [0, T) as its valid range (the
/// runtime checks it on upload; compiled batches satisfy it: padded rows count 0..T-1, packed
/// rows restart at 0 per conversation), the builtin checks it again per run.
/// Returns the buffers for op `r` (rotary or rotary_grad) on x [B, T, H, D]: positions, cos, sin.
template <typename Op>
std::array<Value, 3> RotaryTableBuffers(OpLowering& l, Op r, Value in) {
  const int64_t B = Dim(in, 0), T = Dim(in, 1), D = Dim(in, 3);
  if (r.getPositions()) l.RequireArgumentRange(r.getPositions(), 0, T);
  Value positions = r.getPositions() ? l.BufferOf(r.getPositions()) : Iota(l, B, T);
  const lowering::RotaryTableConstants tables =
      lowering::MakeRotaryTableConstants(l.builder().getContext(), T, D, r.getBase().convertToDouble());
  return {positions, l.Constant(tables.cos), l.Constant(tables.sin)};
}

/// Rotary-family params over the head rows of `in` [B, T, H, D], the tables T positions long.
ukernel::RotaryParams RotaryOver(RotaryOp op, bool bf16, Value in, double eps = 0.0) {
  return {op, bf16 ? ukernel::kRotaryBf16 : 0, Dim(in, 0), Dim(in, 1), Dim(in, 2), Dim(in, 3), Dim(in, 1), eps};
}

/// A rotary followed by its QK-norm is one pass (rotary_rms_norm), which absorbs the norm.
template <typename Op>
LogicalResult LowerRotary(OpLowering& l, Op r, Value in, bool grad) {
  if (Dim(in, 3) % 2 != 0) return r.emitOpError("head dim must be even");
  const auto [positions, cos, sin] = RotaryTableBuffers(l, r, in);
  if constexpr (std::is_same_v<Op, gpt::RotaryOp>) {
    if (gpt::RmsNormOp norm = QkNormAfter(l, r)) {
      l.Absorb(norm);
      return CallRotary(l, in, RotaryOver(RotaryOp::kRotaryRmsNorm, false, in, norm.getEps().convertToDouble()),
                        {l.BufferOf(in), {}, positions, cos, sin, l.result(0), l.BufferOf(norm.getResult())});
    }
    if (auto [norm, round] = RoundedQkNormAfter(l, r); norm) {
      l.Absorb(norm);
      l.Absorb(round);
      return CallRotary(l, in, RotaryOver(RotaryOp::kRotaryRmsNorm, true, in, norm.getEps().convertToDouble()),
                        {l.BufferOf(in), {}, positions, cos, sin, l.result(0), l.BufferOf(round.getResult(0))});
    }
  }
  return CallRotary(l, in, RotaryOver(grad ? RotaryOp::kRotaryGrad : RotaryOp::kRotary, r.getRoundBf16(), in),
                    {l.BufferOf(in), {}, positions, cos, sin, {}, l.result(0)});
}

/// rms_norm_grad; when the QK-norm's rotary_grad follows, both in one pass
/// (rms_norm_rotary_grad), the norm's gradient never written.
LogicalResult LowerRmsNormGrad(OpLowering& l, gpt::RmsNormGradOp n) {
  const double eps = n.getEps().convertToDouble();
  if (gpt::RotaryGradOp grad = RotaryGradAfter(l, n)) {
    Value in = grad.getDy();
    if (Dim(in, 3) % 2 != 0) return grad.emitOpError("head dim must be even");
    const auto [positions, cos, sin] = RotaryTableBuffers(l, grad, in);
    l.Absorb(grad);
    return CallRotary(l, in, RotaryOver(RotaryOp::kRmsNormRotaryGrad, false, in, eps),
                      {l.BufferOf(n.getX()), l.BufferOf(n.getDy()), positions, cos, sin, {}, l.BufferOf(grad.getResult())});
  }
  if (gpt::AddOp add = ResidualAddAfter(l, n)) {
    Value r = add.getLhs() == n.getResult() ? add.getRhs() : add.getLhs();
    l.Absorb(add);
    return CallNorm(l, n.getX(), NormOver(NormOp::kRmsNormGradAdd, 0, n.getX(), eps),
                    {l.BufferOf(n.getX()), l.BufferOf(n.getDy()), l.BufferOf(r), l.BufferOf(add.getResult())});
  }
  if (UnderBf16Autocast(n) && TypeOf(n.getX()).getElementType().isF32()) {
    if (mlir::linalg::GenericOp add = ResidualAddRoundAfter(l, n)) {
      const Value r = add.getDpsInputs()[0] == n.getResult() ? add.getDpsInputs()[1] : add.getDpsInputs()[0];
      l.Absorb(add);
      return CallNorm(l, n.getX(), NormOver(NormOp::kRmsNormGradAdd, ukernel::kNormRoundOutput, n.getX(), eps),
                      {l.BufferOf(n.getX()), l.BufferOf(n.getDy()), l.BufferOf(r), l.BufferOf(add.getResult(0))});
    }
  }
  if (UnderBf16Autocast(n)) {
    if (mlir::linalg::GenericOp round = RoundingAfter(l, n.getResult(), {n.getX(), n.getDy()})) {
      l.Absorb(round);
      return CallNorm(l, n.getX(), NormOver(NormOp::kRmsNormGrad, ukernel::kNormRoundOutput, n.getX(), eps),
                      {l.BufferOf(n.getX()), l.BufferOf(n.getDy()), {}, l.BufferOf(round.getResult(0))});
    }
  }
  return CallNorm(l, n.getX(), NormOver(NormOp::kRmsNormGrad, 0, n.getX(), eps),
                  {l.BufferOf(n.getX()), l.BufferOf(n.getDy()), {}, l.result(0)});
}

/// Whether `generic` is a lone autocast rounding (a fusion of gpt.round_bf16 alone).
bool IsLoneRounding(mlir::linalg::GenericOp generic) {
  auto ops = generic->getAttrOfType<mlir::StringAttr>(kFusionOpsAttr);
  return ops && ops.getValue() == "round_bf16" && generic.getDpsInputs().size() == 1 && generic.getNumResults() == 1;
}

/// The rms_norm_grad that absorbs a lone rounding of its cotangent as a prologue: the very
/// next op (placeholders aside), the rounding's only reader, as dy (not x), none of the norm's
/// own fusions applying; the rounding's input, x and the norm's result each the same bytes as
/// the result or disjoint (the kernel rounds each dy row into a buffer, then writes the row).
gpt::RmsNormGradOp NormGradOfRounding(OpLowering& l, mlir::linalg::GenericOp round) {
  if (!IsLoneRounding(round) || !round.getResult(0).hasOneUse()) return {};
  mlir::Operation* next = NextPast<mlir::tensor::EmptyOp>(round);
  auto n = llvm::dyn_cast_or_null<gpt::RmsNormGradOp>(next);
  if (!n || n.getDy() != round.getResult(0) || n.getX() == round.getResult(0)) return {};
  if (!TypeOf(n.getX()).getElementType().isF32() || RotaryGradAfter(l, n) || ResidualAddAfter(l, n)) return {};
  const Value dy = round.getDpsInputs()[0];
  if (!SameOrDisjointBytes(l, dy, n.getResult()) || !SameOrDisjointBytes(l, n.getX(), n.getResult())) return {};
  return n;
}

/// The bf16 rotary's VJP that the bf16 QK-norm's backward absorbs: the very next op, the only
/// reader of the rounded norm gradient `rounded`, its result and each of rot and dy (both only
/// read) the same bytes or disjoint (one row at a time).
gpt::RotaryGradOp Bf16RotaryGradAfter(OpLowering& l, mlir::linalg::GenericOp rounded, Value rot, Value dy) {
  mlir::Operation* next = NextPast<mlir::tensor::EmptyOp>(rounded);
  auto grad = llvm::dyn_cast_or_null<gpt::RotaryGradOp>(next);
  if (!grad || !grad.getRoundBf16() || grad.getDy() != rounded.getResult(0) || !rounded.getResult(0).hasOneUse()) {
    return {};
  }
  if (TypeOf(rot).getRank() != 4 || Dim(grad.getDy(), 3) % 2 != 0) return {};
  const Value dx = grad.getResult();
  if (!SameOrDisjointBytes(l, rot, dx) || !SameOrDisjointBytes(l, dy, dx)) return {};
  return grad;
}

/// A lone rounding that the rms_norm_grad after it takes as its prologue
/// (rms_norm_grad_of_rounded_dy, with the norm's own rounding epilogue when it has one, and
/// under bf16 autocast the QK-norm's rotary VJP after that too:
/// rms_norm_rotary_grad_of_rounded_dy_bf16).
LogicalResult LowerRoundingIntoNormGrad(OpLowering& l, mlir::linalg::GenericOp round, gpt::RmsNormGradOp n) {
  const Value dy = round.getDpsInputs()[0];
  l.Absorb(n);
  Value out = l.BufferOf(n.getResult());
  int64_t round_dx = 0;
  if (mlir::linalg::GenericOp after = RoundingAfter(l, n.getResult(), {n.getX(), dy})) {
    l.Absorb(after);
    out = l.BufferOf(after.getResult(0));
    round_dx = 1;
    if (gpt::RotaryGradOp grad = Bf16RotaryGradAfter(l, after, n.getX(), dy)) {
      const auto [positions, cos, sin] = RotaryTableBuffers(l, grad, grad.getDy());
      l.Absorb(grad);
      if (failed(CallRotary(l, grad.getDy(),
                            RotaryOver(RotaryOp::kRmsNormRotaryGrad, true, grad.getDy(), n.getEps().convertToDouble()),
                            {l.BufferOf(n.getX()), l.BufferOf(dy), positions, cos, sin, {}, l.BufferOf(grad.getResult())}))) {
        return failure();
      }
      l.builder().getInsertionBlock()->back().setAttr(lowering::kOpNameAttr,
                                                      l.builder().getStringAttr("gpt.rms_norm_grad"));
      return success();
    }
  }
  const int64_t flags = ukernel::kNormRoundDy | (round_dx ? ukernel::kNormRoundOutput : 0);
  if (failed(CallNorm(l, n.getX(), NormOver(NormOp::kRmsNormGrad, flags, n.getX(), n.getEps().convertToDouble()),
                      {l.BufferOf(n.getX()), l.BufferOf(dy), {}, out}))) {
    return failure();
  }
  // Profiles count it as the norm's gradient it mostly is.
  l.builder().getInsertionBlock()->back().setAttr(lowering::kOpNameAttr,
                                                  l.builder().getStringAttr("gpt.rms_norm_grad"));
  return success();
}

/// add; when the rms_norm of its sum follows, both in one pass (add_rms_norm).
LogicalResult LowerAdd(OpLowering& l, gpt::AddOp add) {
  if (gpt::RmsNormOp norm = NormAfter(l, add)) {
    l.Absorb(norm);
    return CallNorm(l, add.getResult(), NormOver(NormOp::kAddRmsNorm, 0, add.getResult(), norm.getEps().convertToDouble()),
                    {l.BufferOf(add.getLhs()), l.BufferOf(add.getRhs()), {}, l.result(0), l.BufferOf(norm.getResult())});
  }
  llvm::SmallVector<gpt::AddOp> run = AddRunFrom(l, add);
  if (run.size() > 1) {
    llvm::SmallVector<int64_t> ints = {static_cast<int64_t>(run.size())};
    llvm::SmallVector<Value> buffers;
    for (gpt::AddOp a : run) {
      ints.push_back(Elements(a.getResult()));
      buffers.append({l.BufferOf(a.getLhs()), l.BufferOf(a.getRhs()), l.BufferOf(a.getResult())});
      if (a != add) l.Absorb(a);
    }
    return Call(l, CpuBuiltinName("add_list", add.getResult()), ints, {}, buffers);
  }
  llvm::SmallVector<Value> buffers = {l.BufferOf(add.getLhs()), l.BufferOf(add.getRhs()), l.result(0)};
  return Call(l, CpuBuiltinName("add", add.getResult()), {Elements(add.getResult())}, {}, buffers);
}

template <typename Op>
LogicalResult CheckAttention(Op a) {
  if (!a.getCausal() || a.getScale()) return a.emitOpError("the cpu target runs causal attention at the default scale");
  return success();
}

bool PrepareForGemmReaders(OpLowering& l, Value v, llvm::ArrayRef<Value> apart);

using ukernel::AttentionOp;
using ukernel::AttentionSlot;

/// Attention-family params for `op`'s q and k; under bf16 autocast (f32 only) its q, k, v,
/// dout are bf16 values (bf16 tile products, P and dS rounded as flash attention does), the
/// kernel the interpreter runs for the same op.
ukernel::AttentionParams AttentionOver(mlir::Operation* op, AttentionOp kind, Value q, Value k, Value segments) {
  const bool bf16 = UnderBf16Autocast(op) && TypeOf(q).getElementType().isF32();
  return {kind,
          (bf16 ? ukernel::kAttentionBf16Inputs : 0) | (segments ? ukernel::kAttentionSegments : 0),
          Dim(q, 0), Dim(q, 1), Dim(q, 2), Dim(k, 2), Dim(q, 3)};
}

LogicalResult LowerAttention(OpLowering& l, gpt::AttentionOp a) {
  if (failed(CheckAttention(a))) return failure();
  const int64_t lse_elements = Dim(a.getQ(), 0) * Dim(a.getQ(), 2) * Dim(a.getQ(), 1);
  Value lse = l.Persistent(mlir::MemRefType::get({lse_elements}, TypeOf(a.getQ()).getElementType()), a.getResult());
  Value segments = a.getSegmentIds() ? l.BufferOf(a.getSegmentIds()) : Value();
  return CallAttention(l, a.getQ(), AttentionOver(a, AttentionOp::kForward, a.getQ(), a.getK(), a.getSegmentIds()),
                       {l.BufferOf(a.getQ()), l.BufferOf(a.getK()), l.BufferOf(a.getV()), segments, l.result(0), lse});
}

LogicalResult LowerAttentionGrad(OpLowering& l, gpt::AttentionGradOp a) {
  if (failed(CheckAttention(a))) return failure();
  AttentionBuffers b{l.BufferOf(a.getQ()), l.BufferOf(a.getK()), l.BufferOf(a.getV()),
                     a.getSegmentIds() ? l.BufferOf(a.getSegmentIds()) : Value()};
  // The forward's lse when `out` is that forward's result on the same inputs; else the
  // forward runs again first, into scratch, for it.
  Value lse;
  if (auto fwd = a.getOut().getDefiningOp<gpt::AttentionOp>()) {
    if (fwd.getQ() == a.getQ() && fwd.getK() == a.getK() && fwd.getV() == a.getV() &&
        fwd.getSegmentIds() == a.getSegmentIds()) {
      lse = l.FindPersistent(fwd.getResult());
    }
  }
  mlir::Type f = TypeOf(a.getQ()).getElementType();
  if (!lse) {
    lse = l.Scratch(mlir::MemRefType::get({Dim(a.getQ(), 0) * Dim(a.getQ(), 2) * Dim(a.getQ(), 1)}, f));
    AttentionBuffers forward = b;
    forward[int(AttentionSlot::kOut)] = l.Scratch(mlir::MemRefType::get({Elements(a.getQ())}, f));
    forward[int(AttentionSlot::kLse)] = lse;
    if (failed(CallAttention(l, a.getQ(), AttentionOver(a, AttentionOp::kForward, a.getQ(), a.getK(), a.getSegmentIds()),
                             forward))) {
      return failure();
    }
  }
  b[int(AttentionSlot::kOut)] = l.BufferOf(a.getOut());
  b[int(AttentionSlot::kLse)] = lse;
  b[int(AttentionSlot::kDout)] = l.BufferOf(a.getDout());
  b[int(AttentionSlot::kDq)] = l.result(0);
  b[int(AttentionSlot::kDk)] = l.result(1);
  b[int(AttentionSlot::kDv)] = l.result(2);
  ukernel::AttentionParams p = AttentionOver(a, AttentionOp::kBackward, a.getQ(), a.getK(), a.getSegmentIds());
  if (p.Has(ukernel::kAttentionBf16Inputs)) {
    // dv (through reshapes that are views) written prepared when only bf16 GEMMs read it: the
    // value projection's input and weight gradients.
    llvm::SmallVector<Value> apart = {a.getQ(), a.getK(), a.getV(), a.getOut(), a.getDout(), a.getDq(), a.getDk()};
    if (a.getSegmentIds()) apart.push_back(a.getSegmentIds());
    if (PrepareForGemmReaders(l, ThroughViewReshapes(l, a.getDv()), apart)) p.flags |= ukernel::kAttentionPreparedDv;
  }
  return CallAttention(l, a.getQ(), p, b);
}

/// The cross_entropy a softcap's loss fusion absorbs: after the softcap with nothing but
/// reshapes between, reading the softcap's result (through reshapes) as its logits, with
/// ignore index -1, `x` (what the fused kernel reads: the softcap's input, or the input of a
/// rounding before it) and the softcap's result the same bytes or disjoint.
gpt::CrossEntropyOp LossAfter(OpLowering& l, gpt::SoftcapOp softcap, Value x) {
  mlir::Operation* next = NextPast<gpt::ReshapeOp>(softcap);
  auto ce = llvm::dyn_cast_or_null<gpt::CrossEntropyOp>(next);
  if (!ce || static_cast<int64_t>(ce.getIgnoreIndex()) != -1) return {};
  Value logits = ce.getLogits();
  while (auto r = logits.getDefiningOp<gpt::ReshapeOp>()) logits = r.getX();
  if (logits != softcap.getResult()) return {};
  if (!SameOrDisjointBytes(l, x, softcap.getResult())) return {};
  return ce;
}

/// The targets as the step has them: a reshape of them between the softcap and its loss may
/// be a copy that runs after the fused launch, and a reshape changes no byte.
Value TargetsBeforeReshapes(gpt::CrossEntropyOp ce) {
  Value targets = ce.getTargets();
  while (auto r = targets.getDefiningOp<gpt::ReshapeOp>()) targets = r.getX();
  return targets;
}

/// nanochat's bf16 softcap (round_bf16) on `x`, rounded first when `round_input` (the
/// gpt.round_bf16 before it, absorbed by the caller); with its cross_entropy after it, both
/// in one pass (softcap_bf16_cross_entropy). The result goes to the softcap's own buffer.
LogicalResult LowerBf16Softcap(OpLowering& l, gpt::SoftcapOp e, Value x, bool round_input) {
  if (!TypeOf(x).getElementType().isF32()) return e.emitOpError("the cpu target's bf16 softcap runs on f32 tensors");
  const double cap = e.getCap().convertToDouble();
  if (gpt::CrossEntropyOp ce = LossAfter(l, e, x)) {
    const int64_t N = Dim(ce.getLogits(), 0), V = Dim(ce.getLogits(), 1);
    l.RequireArgumentRange(ce.getTargets(), -1, V);
    l.Absorb(ce);
    return Call(l, "cpu.softcap_bf16_cross_entropy.f32", {N, V, round_input ? 1 : 0}, {cap},
                {l.BufferOf(x), l.BufferOf(TargetsBeforeReshapes(ce)), l.BufferOf(e.getResult()),
                 l.BufferOf(ce.getResult())});
  }
  return Call(l, "cpu.softcap_bf16.f32", {Elements(e.getResult()), round_input ? 1 : 0}, {cap},
              {l.BufferOf(x), l.BufferOf(e.getResult())});
}

/// softcap; when its cross_entropy follows, both in one pass (softcap_cross_entropy).
LogicalResult LowerSoftcap(OpLowering& l, gpt::SoftcapOp e) {
  if (e.getRoundBf16()) return LowerBf16Softcap(l, e, e.getX(), /*round_input=*/false);
  const double cap = e.getCap().convertToDouble();
  if (gpt::CrossEntropyOp ce = LossAfter(l, e, e.getX())) {
    const int64_t N = Dim(ce.getLogits(), 0), V = Dim(ce.getLogits(), 1);
    l.RequireArgumentRange(ce.getTargets(), -1, V);
    l.Absorb(ce);
    return Call(l, CpuBuiltinName("softcap_cross_entropy", e.getX()), {N, V}, {cap},
                {l.BufferOf(e.getX()), l.BufferOf(TargetsBeforeReshapes(ce)), l.result(0), l.BufferOf(ce.getResult())});
  }
  return Call(l, CpuBuiltinName("softcap", e.getResult()), {Elements(e.getResult())}, {cap},
              {l.BufferOf(e.getX()), l.result(0)});
}

/// The bf16 softcap that absorbs a rounding of its input (autocast's rounding of the logits):
/// the very next op (reshapes aside), the rounding's only reader, its input and the softcap's
/// result the same bytes or disjoint (the kernel reads each element before writing it).
gpt::SoftcapOp Bf16SoftcapAfter(OpLowering& l, gpt::RoundBf16Op round) {
  mlir::Operation* next = NextPast<gpt::ReshapeOp>(round);
  auto softcap = llvm::dyn_cast_or_null<gpt::SoftcapOp>(next);
  if (!softcap || !softcap.getRoundBf16() || softcap.getX() != round.getResult() || !round.getResult().hasOneUse()) {
    return {};
  }
  if (!SameOrDisjointBytes(l, round.getX(), softcap.getResult())) return {};
  return softcap;
}

/// A gpt.round_bf16 that gpt-fuse left to the target (it feeds the bf16 softcap or its
/// gradient): absorbed by the softcap after it when it can be, else the round_bf16 builtin.
LogicalResult LowerRoundBf16(OpLowering& l, gpt::RoundBf16Op round) {
  if (gpt::SoftcapOp softcap = Bf16SoftcapAfter(l, round)) {
    l.Absorb(softcap);
    if (failed(LowerBf16Softcap(l, softcap, round.getX(), /*round_input=*/true))) return failure();
    // Profiles count it as the softcap (and its loss) it mostly is, not as the rounding.
    l.builder().getInsertionBlock()->back().setAttr(lowering::kOpNameAttr, l.builder().getStringAttr("gpt.softcap"));
    return success();
  }
  return Call(l, "cpu.round_bf16.f32", {Elements(round.getResult())}, {}, {l.BufferOf(round.getX()), l.result(0)});
}

LogicalResult LowerCrossEntropyGrad(OpLowering& l, gpt::CrossEntropyGradOp ce) {
  if (static_cast<int64_t>(ce.getIgnoreIndex()) != -1) return ce.emitOpError("the cpu target ignores target -1 only");
  const int64_t N = Dim(ce.getLogits(), 0), V = Dim(ce.getLogits(), 1);
  Value out = l.result(0), targets = l.BufferOf(ce.getTargets()), dloss = l.BufferOf(ce.getDloss());
  double cap = 0;
  std::string name = CpuBuiltinName("cross_entropy_grad", ce.getLogits());
  // The library kernel overwrites a row before it reads it again: logits and output must not
  // share any byte. The bf16 step's rounding of the gradient may stand between (f32 only).
  const bool f32 = TypeOf(ce.getLogits()).getElementType().isF32();
  if (auto epilogue = lowering::FuseSoftcapEpilogue(l, ce, /*allow_same_bytes=*/false, /*through_round_bf16=*/f32)) {
    cap = epilogue->cap;
    out = epilogue->out;
    targets = epilogue->targets;
    dloss = epilogue->dloss;
    if (epilogue->round_dy) name = "cpu.cross_entropy_grad_softcap_bf16.f32";
  }
  return Call(l, name, {N, V}, {cap}, {l.BufferOf(ce.getLogits()), targets, dloss, out});
}

/// Whether `t` (a 2-D transpose of a function argument: a weight) is read only as the weight
/// of matmuls, with nothing before the last of them overwriting the argument (a donation):
/// then the transposed copy is never made and each matmul multiplies by the argument itself
/// (the GEMM form dyw), which gives the same bits.
bool TransposeFoldsIntoMatmuls(gpt::TransposeOp t) {
  auto arg = llvm::dyn_cast<mlir::BlockArgument>(t.getX());
  if (!arg || TypeOf(t.getX()).getRank() != 2 || t.getPerm().size() != 2 || t.getPerm()[0] != 1) return false;
  if (t.getResult().use_empty()) return false;
  mlir::Operation* last = t;
  for (mlir::Operation* user : t.getResult().getUsers()) {
    auto m = llvm::dyn_cast<gpt::MatmulOp>(user);
    if (!m || m.getW() != t.getResult() || m.getX() == t.getResult() || m->getBlock() != t->getBlock()) return false;
    if (last->isBeforeInBlock(m)) last = m;
  }
  for (mlir::Operation* op = t->getNextNode(); op != nullptr && op != last; op = op->getNextNode()) {
    if (auto donates = op->getAttrOfType<mlir::DenseI64ArrayAttr>("gpt.donates")) {
      if (llvm::is_contained(donates.asArrayRef(), static_cast<int64_t>(arg.getArgNumber()))) return false;
    }
  }
  return true;
}

LogicalResult LowerTranspose(OpLowering& l, gpt::TransposeOp t) {
  if (TransposeFoldsIntoMatmuls(t)) return success();  // its matmuls read the argument itself
  const int64_t rank = TypeOf(t.getX()).getRank();
  if (rank < 1 || rank > 8) return t.emitOpError("the cpu target transposes ranks 1 to 8");
  llvm::SmallVector<int64_t> ints = {rank};
  for (int64_t i = 0; i < 8; ++i) ints.push_back(i < rank ? Dim(t.getX(), i) : 1);
  for (int64_t i = 0; i < 8; ++i) ints.push_back(i < rank ? t.getPerm()[i] : i);
  const unsigned bits = TypeOf(t.getX()).getElementTypeBitWidth();
  if (bits != 32 && bits != 64) return t.emitOpError("the cpu target transposes 4- and 8-byte elements");
  return Call(l, bits == 32 ? "cpu.permute.b32" : "cpu.permute.b64", ints, {}, {l.BufferOf(t.getX()), l.result(0)});
}

/// Marks a bf16 weight gradient whose dy its producer writes prepared for the bf16 GEMMs
/// (its GEMM flag prepared_a), or, from the fused lm_head loss, prepared in the
/// weight gradient's slabs (kPreparedDySlabsAttr: its GEMM flag slabs_a,
/// which reads them in place); set by the producer's lowering, read by the weight gradient's,
/// later in the same function.
constexpr char kPreparedDyAttr[] = "gpt.cpu.prepared_dy";
constexpr char kPreparedDySlabsAttr[] = "gpt.cpu.prepared_dy_slabs";

/// Under bf16 autocast the fused launch may write dy prepared for the bf16 GEMMs (half its
/// bytes on onednn) when every other reader of dy is a bf16 weight gradient reading it as its
/// dy, which would prepare it anyway: in those weight gradients' slabs, marked
/// (kPreparedDySlabsAttr). True then.
bool PrepareDyForWeightGradients(lowering::LinearLossChain& c) {
  const Value dy = c.softcap_grad.getResult();
  llvm::SmallVector<gpt::MatmulWeightGradOp> readers;
  for (mlir::Operation* user : dy.getUsers()) {
    if (user == c.grad_input.getOperation()) continue;
    auto g = llvm::dyn_cast<gpt::MatmulWeightGradOp>(user);
    if (!g || g.getDy() != dy || g.getX() == dy || !UnderBf16Autocast(g)) return false;
    readers.push_back(g);
  }
  if (readers.empty()) return false;
  for (gpt::MatmulWeightGradOp g : readers) g->setAttr(kPreparedDySlabsAttr, mlir::UnitAttr::get(g.getContext()));
  return true;
}

/// The lm_head's loss chain as one launch (linear_loss_fusion.h) when what it writes (loss,
/// dy, dx) shares no byte with what it reads or with each other; else false, nothing emitted.
mlir::FailureOr<bool> LowerLinearLoss(OpLowering& l, gpt::MatmulOp m) {
  std::optional<lowering::LinearLossChain> c = lowering::MatchLinearLoss(m);
  // The bf16 chain's products round their inputs: only where the matmuls are autocast's.
  if (!c || c->bf16() != UnderBf16Autocast(m)) return false;
  const Value x = m.getX(), w = m.getW();
  const Value loss = c->loss.getResult(), dy = c->softcap_grad.getResult(), dx = c->grad_input.getResult();
  for (Value out : {loss, dy, dx}) {
    for (Value in : {x, w, c->targets, c->dloss}) {
      if (!DisjointBytes(l, out, in)) return false;
    }
  }
  if (!DisjointBytes(l, loss, dy) || !DisjointBytes(l, loss, dx) || !DisjointBytes(l, dy, dx)) return false;
  const int64_t N = Rows(x), C = Dim(x, -1), V = Dim(w, 0);
  l.RequireArgumentRange(c->targets, -1, V);
  // dx = dy w from w itself: the transpose the unfused product reads is absorbed, never made.
  for (mlir::Operation* op : c->Absorbed()) l.Absorb(op);
  llvm::SmallVector<int64_t> ints = {N, V, C};
  std::string name = CpuBuiltinName("linear_softcap_cross_entropy_grad_v2", x);
  if (c->bf16()) {
    name = "cpu.linear_softcap_bf16_cross_entropy_grad_v2.f32";
    ints.push_back(PrepareDyForWeightGradients(*c) ? 2 : 0);  // dy in the weight gradients' slabs, or f32
  }
  if (failed(Call(l, name, ints,
                  {c->softcap.getCap().convertToDouble()},
                  {l.BufferOf(x), l.BufferOf(w), l.BufferOf(c->targets), l.BufferOf(c->dloss), l.BufferOf(loss),
                   l.BufferOf(dy), l.BufferOf(dx)}))) {
    return mlir::failure();
  }
  return true;
}

/// The relu_square that a matmul's epilogue absorbs: the very next op after `after` (the
/// matmul, or the rounding a bf16 matmul absorbs), squaring `y`, its result sharing no byte
/// with the matmul's inputs and the same bytes as y or none.
gpt::ReluSquareOp ReluSquareAfter(OpLowering& l, mlir::Operation* after, Value y, llvm::ArrayRef<Value> inputs) {
  mlir::Operation* next = NextPast<mlir::tensor::EmptyOp>(after);
  auto relu = llvm::dyn_cast_or_null<gpt::ReluSquareOp>(next);
  if (!relu || relu.getX() != y) return {};
  for (Value in : inputs) {
    if (!DisjointBytes(l, in, relu.getResult())) return {};
  }
  if (!SameOrDisjointBytes(l, y, relu.getResult())) return {};
  return relu;
}

/// Under bf16 autocast, what a block's output projection `m` absorbs: the fusion right after
/// it that joins it to the residual stream (gpt.fusion_ops "round_bf16,add,round_bf16": its
/// input 0 the product, rounded, then added to input 1, the residual, then rounded) and the
/// unrounded rms_norm of the sum right after that, over the product's rows. Bytes: the
/// product's buffer (written first) shares none with x, w or the residual; the sum and the
/// norm none with x or w, and each the same as or none of the product, the residual and each
/// other (one row at a time).
struct ResidualNorm {
  mlir::linalg::GenericOp add;
  gpt::RmsNormOp norm;
};
std::optional<ResidualNorm> ResidualNormAfter(OpLowering& l, gpt::MatmulOp m) {
  if (!m.getResult().hasOneUse()) return std::nullopt;
  auto add = llvm::dyn_cast_or_null<mlir::linalg::GenericOp>(NextPast<mlir::tensor::EmptyOp>(m));
  if (!add) return std::nullopt;
  auto ops = add->getAttrOfType<mlir::StringAttr>(kFusionOpsAttr);
  if (!ops || ops.getValue() != "round_bf16,add,round_bf16" || add.getDpsInputs().size() != 2 ||
      add.getNumResults() != 1 || add.getDpsInputs()[0] != m.getResult()) {
    return std::nullopt;
  }
  // The residual (block argument 1) goes straight into the add; the product is rounded first.
  mlir::Block& body = add.getRegion().front();
  mlir::BlockArgument residual_arg = body.getArgument(1);
  if (!residual_arg.hasOneUse() || !llvm::isa<mlir::arith::AddFOp>(*residual_arg.getUsers().begin())) {
    return std::nullopt;
  }
  if (llvm::any_of(body.getArgument(0).getUsers(), [](mlir::Operation* u) { return llvm::isa<mlir::arith::AddFOp>(u); })) {
    return std::nullopt;
  }
  auto norm = llvm::dyn_cast_or_null<gpt::RmsNormOp>(NextPast<mlir::tensor::EmptyOp>(add));
  if (!norm || norm.getX() != add.getResult(0) || Dim(norm.getX(), -1) != Dim(m.getResult(), -1)) return std::nullopt;
  if (RoundingAfter(l, norm.getResult(), {norm.getX()})) return std::nullopt;  // rounded norms stay their own launch
  const Value x = m.getX(), w = m.getW(), res = add.getDpsInputs()[1], mm = m.getResult();
  const Value sum = add.getResult(0), y = norm.getResult();
  for (Value out : {mm, sum, y}) {
    if (!DisjointBytes(l, out, x) || !DisjointBytes(l, out, w)) return std::nullopt;
  }
  if (!DisjointBytes(l, mm, res)) return std::nullopt;
  if (!SameOrDisjointBytes(l, sum, mm) || !SameOrDisjointBytes(l, y, mm) || !SameOrDisjointBytes(l, sum, res) ||
      !SameOrDisjointBytes(l, y, res) || !SameOrDisjointBytes(l, sum, y)) {
    return std::nullopt;
  }
  return ResidualNorm{add, norm};
}

/// Under bf16 autocast, the MLP's relu² backward right after the product that makes its
/// cotangent (a matmul by a folded transposed weight `w`): the fusion
/// "round_bf16,relu_square_grad" whose input 0 is the product (its only reader) and input 1 the
/// relu²'s input u (the argument its relu, an arith.maximumf, reads), a few ops later at most
/// (the backward puts the weight gradient between), none of those between touching g's bytes
/// or writing u's (the launch computes g earlier than the plan has it). Bytes: the product dh
/// shares none with dy, w or u (it is written before u's rows are read); the gradient g the
/// same as or none of dh and u, none of dy or w.
mlir::linalg::GenericOp ReluSquareGradAfter(OpLowering& l, gpt::MatmulOp m, Value w) {
  if (!m.getResult().hasOneUse()) return {};
  auto g = llvm::dyn_cast<mlir::linalg::GenericOp>(*m.getResult().getUsers().begin());
  if (!g || g->getBlock() != m->getBlock()) return {};
  auto ops = g->getAttrOfType<mlir::StringAttr>(kFusionOpsAttr);
  if (!ops || ops.getValue() != "round_bf16,relu_square_grad" || g.getDpsInputs().size() != 2 ||
      g.getNumResults() != 1 || g.getDpsInputs()[0] != m.getResult()) {
    return {};
  }
  mlir::Block& body = g.getRegion().front();
  auto relu_reads = [](mlir::BlockArgument a) {
    return llvm::any_of(a.getUsers(), [](mlir::Operation* u) { return llvm::isa<mlir::arith::MaximumFOp>(u); });
  };
  if (!relu_reads(body.getArgument(1)) || relu_reads(body.getArgument(0))) return {};
  const Value dy = m.getX(), u = g.getDpsInputs()[1], dh = m.getResult(), out = g.getResult(0);
  for (Value in : {dy, w, u}) {
    if (!DisjointBytes(l, dh, in)) return {};
  }
  for (Value in : {dy, w}) {
    if (!DisjointBytes(l, out, in)) return {};
  }
  if (!SameOrDisjointBytes(l, out, dh) || !SameOrDisjointBytes(l, out, u)) return {};
  if (!ComputableEarly(l, m, g, out, /*read=*/u)) return {};
  return g;
}

/// Marks a bf16 gpt.matmul or gpt.matmul_weight_grad whose x its producer writes prepared for
/// the bf16 GEMMs (PrepareForGemmReaders); set by the producer's lowering, read by the
/// readers', later in the same function.
constexpr char kPreparedXAttr[] = "gpt.cpu.prepared_x";

/// Under bf16 autocast a value that only bf16 GEMMs read, as their x (the block's norms, read
/// by the q, k, v and MLP matmuls, and the MLP's hidden activation, read by the output
/// projection), and their weight gradients, would be prepared (narrowed to bf16 bits) on every
/// read; its producer writes it prepared once instead, in cache and in half the bytes on
/// onednn. The same for a cotangent only bf16 GEMMs read (the MLP's, read by the product by
/// the transposed weight and by the weight gradient, as dy). True, and the readers marked
/// (kPreparedXAttr, or kPreparedDyAttr on a weight gradient reading v as dy), when every reader
/// is a matmul lowered with a rounding, with its residual norm or by its folded transposed
/// weight (the forms with a prepared builtin), or a weight gradient, and `v` shares no byte
/// with `apart` (the producer's other operands: rows written at half width would overlap rows
/// yet to be read).
bool PrepareForGemmReaders(OpLowering& l, Value v, llvm::ArrayRef<Value> apart) {
  for (Value other : apart) {
    if (!DisjointBytes(l, v, other)) return false;
  }
  llvm::SmallVector<std::pair<mlir::Operation*, const char*>> marks;
  for (mlir::Operation* user : v.getUsers()) {
    if (auto m = llvm::dyn_cast<gpt::MatmulOp>(user)) {
      if (m.getX() != v || m.getW() == v || !UnderBf16Autocast(m) || lowering::MatchLinearLoss(m)) return false;
      if (auto t = m.getW().getDefiningOp<gpt::TransposeOp>(); t && TransposeFoldsIntoMatmuls(t)) {
        if (ReluSquareGradAfter(l, m, t.getX())) return false;  // that form reads its dy as f32
      } else if (!ResidualNormAfter(l, m) && !RoundingAfter(l, m.getResult(), {m.getX(), m.getW()})) {
        return false;
      }
      marks.push_back({m, kPreparedXAttr});
    } else if (auto g = llvm::dyn_cast<gpt::MatmulWeightGradOp>(user)) {
      if ((g.getX() == v) == (g.getDy() == v) || !UnderBf16Autocast(g)) return false;
      marks.push_back({g, g.getX() == v ? kPreparedXAttr : kPreparedDyAttr});
    } else {
      return false;
    }
  }
  if (marks.empty()) return false;
  for (auto [reader, attr] : marks) reader->setAttr(attr, mlir::UnitAttr::get(reader->getContext()));
  return true;
}

/// x w'^T with w' = w^T folded (TransposeFoldsIntoMatmuls): dx = x w by the GEMM form dyw
/// (x [M, N], w [N, K]), under bf16 autocast its bf16 kernel, absorbing a lone rounding after
/// it as the bf16 matmul does.
LogicalResult LowerMatmulByTransposedWeight(OpLowering& l, gpt::MatmulOp m, Value w, bool bf16) {
  const int64_t M = Rows(m.getX()), N = Dim(w, 0), K = Dim(w, 1);
  const bool prepared_dy = m->hasAttr(kPreparedXAttr);
  if (prepared_dy && !bf16) return m.emitOpError("dy is written prepared for a bf16 GEMM, but this matmul is not bf16");
  ukernel::GemmParams p{GemmForm::kDyW, GemmEpilogue::kNone,
                        FlagIf(bf16, ukernel::kGemmBf16Inputs) | FlagIf(prepared_dy, ukernel::kGemmPreparedA), M, N, K};
  GemmBuffers b{l.BufferOf(m.getX()), l.BufferOf(w), {}, l.result(0)};
  if (bf16) {
    if (mlir::linalg::GenericOp g = prepared_dy ? mlir::linalg::GenericOp() : ReluSquareGradAfter(l, m, w)) {
      l.Absorb(g);
      const Value u = g.getDpsInputs()[1];
      const bool prepared_g = PrepareForGemmReaders(l, g.getResult(0), {m.getX(), w});  // g may be dh's or u's bytes
      p.epilogue = GemmEpilogue::kReluSquareGrad;
      p.flags |= ukernel::kGemmRoundOutput | FlagIf(prepared_g, ukernel::kGemmPreparedOut);
      b[int(GemmSlot::kAux)] = l.BufferOf(u);
      b[int(GemmSlot::kOut0)] = l.BufferOf(g.getResult(0));
      return CallGemm(l, m.getX(), p, b);
    }
    if (mlir::linalg::GenericOp round = RoundingAfter(l, m.getResult(), {m.getX(), m.getW(), w})) {
      l.Absorb(round);
      p.flags |= ukernel::kGemmRoundOutput;
      b[int(GemmSlot::kC)] = l.BufferOf(round.getResult(0));
    }
  }
  return CallGemm(l, m.getX(), p, b);
}

/// A muon_update with the later ones of its shape that may run with it (muon_group_fusion.h)
/// as one muon_group launch; alone, the muon launch. Under bf16 autocast Newton-Schulz runs
/// in bf16, as nanochat's does (`bf16`: "_bf16").
LogicalResult LowerMuonUpdates(OpLowering& l, gpt::MuonUpdateOp first, const std::string& bf16) {
  if (!first.getNesterov() || first.getNsSteps() != 5) {
    return first.emitOpError("the cpu target runs Nesterov Muon with 5 Newton-Schulz steps");
  }
  const llvm::SmallVector<gpt::MuonUpdateOp> group = lowering::MatchMuonGroup(
      first, [&](Value a, Value b) { return DisjointBytes(l, a, b); },
      [&](mlir::Operation* op) { return l.IsAbsorbed(op); });
  llvm::SmallVector<Value> buffers;
  for (gpt::MuonUpdateOp u : group) {
    if (u != first) l.Absorb(u);
    buffers.append({l.BufferOf(u.getParam()), l.BufferOf(u.getGrad()), l.BufferOf(u.getMomentumBuffer()),
                    l.BufferOf(u.getLr()), l.BufferOf(u.getNewParam()), l.BufferOf(u.getNewMomentumBuffer())});
  }
  const int64_t rows = Dim(first.getGrad(), 0), cols = Dim(first.getGrad(), 1);
  const double momentum = first.getMomentum().convertToDouble();
  if (group.size() == 1) return Call(l, CpuBuiltinName("muon" + bf16, first.getGrad()), {rows, cols}, {momentum}, buffers);
  return Call(l, CpuBuiltinName("muon_group" + bf16, first.getGrad()), {static_cast<int64_t>(group.size()), rows, cols},
              {momentum}, buffers);
}

LogicalResult LowerOp(OpLowering& l) {
  mlir::Operation* op = l.op();
  auto pointwise = [&](const char* name, llvm::ArrayRef<Value> in, llvm::ArrayRef<double> floats) {
    llvm::SmallVector<Value> buffers;
    for (Value v : in) buffers.push_back(l.BufferOf(v));
    buffers.push_back(l.result(0));
    return Call(l, CpuBuiltinName(name, op->getResult(0)), {Elements(op->getResult(0))}, floats, buffers);
  };
  if (auto g = llvm::dyn_cast<mlir::linalg::GenericOp>(op)) {
    if (gpt::RmsNormGradOp n = NormGradOfRounding(l, g)) return LowerRoundingIntoNormGrad(l, g, n);
    return LowerFusion(l, g);
  }
  if (auto e = llvm::dyn_cast<gpt::EmbeddingOp>(op)) {
    l.RequireArgumentRange(e.getIds(), 0, Dim(e.getTable(), 0));
    return Call(l, CpuBuiltinName("embedding", e.getTable()), {Dim(e.getTable(), 0), Dim(e.getTable(), 1), Elements(e.getIds())},
                {}, {l.BufferOf(e.getTable()), l.BufferOf(e.getIds()), l.result(0)});
  }
  if (auto e = llvm::dyn_cast<gpt::EmbeddingGradOp>(op)) {
    return Call(l, CpuBuiltinName("embedding_grad", e.getDy()),
                {static_cast<int64_t>(e.getVocabSize()), Dim(e.getDy(), -1), Elements(e.getIds())}, {},
                {l.BufferOf(e.getIds()), l.BufferOf(e.getDy()), l.result(0)});
  }
  // Under bf16 autocast a matmul's inputs are bf16 values: its builtin runs bf16 dot products.
  const std::string bf16 = UnderBf16Autocast(op) ? "_bf16" : "";
  if (auto m = llvm::dyn_cast<gpt::MatmulOp>(op)) {
    mlir::FailureOr<bool> fused = LowerLinearLoss(l, m);
    if (failed(fused)) return failure();
    if (*fused) return success();
    if (auto t = m.getW().getDefiningOp<gpt::TransposeOp>(); t && TransposeFoldsIntoMatmuls(t)) {
      return LowerMatmulByTransposedWeight(l, m, t.getX(), !bf16.empty());
    }
    const bool prepared_x = m->hasAttr(kPreparedXAttr);
    ukernel::GemmParams p{GemmForm::kXWt, GemmEpilogue::kNone,
                          FlagIf(!bf16.empty(), ukernel::kGemmBf16Inputs) | FlagIf(prepared_x, ukernel::kGemmPreparedA),
                          Rows(m.getX()), Dim(m.getW(), 0), Dim(m.getW(), 1)};
    GemmBuffers b{l.BufferOf(m.getX()), l.BufferOf(m.getW()), {}, l.result(0)};
    if (!bf16.empty() && TypeOf(m.getX()).getElementType().isF32()) {
      if (std::optional<ResidualNorm> r = ResidualNormAfter(l, m)) {
        l.Absorb(r->add);
        l.Absorb(r->norm);
        const bool prepared_y =
            PrepareForGemmReaders(l, r->norm.getResult(),
                                  {m.getX(), m.getW(), r->add.getDpsInputs()[1], m.getResult(), r->add.getResult(0)});
        p.epilogue = GemmEpilogue::kResidualRmsNorm;
        p.flags |= ukernel::kGemmRoundOutput | FlagIf(prepared_y, ukernel::kGemmPreparedOut);
        p.eps = r->norm.getEps().convertToDouble();
        b[int(GemmSlot::kAux)] = l.BufferOf(r->add.getDpsInputs()[1]);
        b[int(GemmSlot::kOut0)] = l.BufferOf(r->add.getResult(0));
        b[int(GemmSlot::kOut1)] = l.BufferOf(r->norm.getResult());
        return CallGemm(l, m.getX(), p, b);
      }
    }
    if (!bf16.empty()) {
      if (mlir::linalg::GenericOp round = RoundingAfter(l, m.getResult(), {m.getX(), m.getW()})) {
        l.Absorb(round);
        p.flags |= ukernel::kGemmRoundOutput;
        b[int(GemmSlot::kC)] = l.BufferOf(round.getResult(0));
        if (gpt::ReluSquareOp relu = ReluSquareAfter(l, round, round.getResult(0), {m.getX(), m.getW()})) {
          l.Absorb(relu);
          const bool prepared_r = PrepareForGemmReaders(l, relu.getResult(), {m.getX(), m.getW(), round.getResult(0)});
          p.epilogue = GemmEpilogue::kReluSquare;
          p.flags |= FlagIf(prepared_r, ukernel::kGemmPreparedOut);
          b[int(GemmSlot::kOut0)] = l.BufferOf(relu.getResult());
        }
        return CallGemm(l, m.getX(), p, b);
      }
    } else if (gpt::ReluSquareOp relu = ReluSquareAfter(l, m, m.getResult(), {m.getX(), m.getW()})) {
      l.Absorb(relu);
      p.epilogue = GemmEpilogue::kReluSquare;
      b[int(GemmSlot::kOut0)] = l.BufferOf(relu.getResult());
      return CallGemm(l, m.getX(), p, b);
    }
    if (prepared_x) return m.emitOpError("x is written prepared for a bf16 GEMM form this matmul is not lowered to");
    return CallGemm(l, m.getX(), p, b);
  }
  if (auto m = llvm::dyn_cast<gpt::MatmulWeightGradOp>(op)) {
    const bool prepared_dy = m->hasAttr(kPreparedDyAttr), prepared_x = m->hasAttr(kPreparedXAttr),
               slabs = m->hasAttr(kPreparedDySlabsAttr);
    if (slabs && (prepared_x || prepared_dy)) return m.emitOpError("dy in slabs is read with an f32 x only");
    const ukernel::GemmParams p{GemmForm::kDyTX, GemmEpilogue::kNone,
                                FlagIf(!bf16.empty() || prepared_dy || prepared_x || slabs, ukernel::kGemmBf16Inputs) |
                                    FlagIf(prepared_dy, ukernel::kGemmPreparedA) |
                                    FlagIf(prepared_x, ukernel::kGemmPreparedB) | FlagIf(slabs, ukernel::kGemmSlabsA),
                                Rows(m.getX()), Dim(m.getDy(), -1), Dim(m.getX(), -1)};
    return CallGemm(l, m.getX(), p, {l.BufferOf(m.getDy()), l.BufferOf(m.getX()), {}, l.result(0)});
  }
  if (auto n = llvm::dyn_cast<gpt::RmsNormOp>(op)) {
    if (!bf16.empty()) {
      if (mlir::linalg::GenericOp round = RoundingAfter(l, n.getResult(), {n.getX()})) {
        l.Absorb(round);
        return CallNorm(l, n.getX(),
                        NormOver(NormOp::kRmsNorm, ukernel::kNormRoundOutput, n.getX(), n.getEps().convertToDouble()),
                        {l.BufferOf(n.getX()), {}, {}, l.BufferOf(round.getResult(0))});
      }
    }
    return CallNorm(l, n.getX(), NormOver(NormOp::kRmsNorm, 0, n.getX(), n.getEps().convertToDouble()),
                    {l.BufferOf(n.getX()), {}, {}, l.result(0)});
  }
  if (auto n = llvm::dyn_cast<gpt::RmsNormGradOp>(op)) return LowerRmsNormGrad(l, n);
  if (auto r = llvm::dyn_cast<gpt::RotaryOp>(op)) return LowerRotary(l, r, r.getX(), false);
  if (auto r = llvm::dyn_cast<gpt::RotaryGradOp>(op)) return LowerRotary(l, r, r.getDy(), true);
  if (auto a = llvm::dyn_cast<gpt::AttentionOp>(op)) return LowerAttention(l, a);
  if (auto a = llvm::dyn_cast<gpt::AttentionGradOp>(op)) return LowerAttentionGrad(l, a);
  if (auto e = llvm::dyn_cast<gpt::AddOp>(op)) return LowerAdd(l, e);
  if (auto e = llvm::dyn_cast<gpt::MulOp>(op)) return pointwise("mul", {e.getLhs(), e.getRhs()}, {});
  if (auto e = llvm::dyn_cast<gpt::ReluSquareOp>(op)) return pointwise("relu_square", {e.getX()}, {});
  if (auto e = llvm::dyn_cast<gpt::ReluSquareGradOp>(op)) return pointwise("relu_square_grad", {e.getX(), e.getDy()}, {});
  if (auto e = llvm::dyn_cast<gpt::SoftcapOp>(op)) return LowerSoftcap(l, e);
  if (auto r = llvm::dyn_cast<gpt::RoundBf16Op>(op)) return LowerRoundBf16(l, r);
  if (auto e = llvm::dyn_cast<gpt::SoftcapGradOp>(op)) {
    return pointwise("softcap_grad", {e.getY(), e.getDy()}, {e.getCap().convertToDouble()});
  }
  if (auto ce = llvm::dyn_cast<gpt::CrossEntropyOp>(op)) {
    if (static_cast<int64_t>(ce.getIgnoreIndex()) != -1) return ce.emitOpError("the cpu target ignores target -1 only");
    l.RequireArgumentRange(ce.getTargets(), -1, Dim(ce.getLogits(), 1));
    return Call(l, CpuBuiltinName("cross_entropy", ce.getLogits()), {Dim(ce.getLogits(), 0), Dim(ce.getLogits(), 1)}, {},
                {l.BufferOf(ce.getLogits()), l.BufferOf(ce.getTargets()), l.result(0)});
  }
  if (auto ce = llvm::dyn_cast<gpt::CrossEntropyGradOp>(op)) return LowerCrossEntropyGrad(l, ce);
  if (auto t = llvm::dyn_cast<gpt::TransposeOp>(op)) return LowerTranspose(l, t);
  if (auto u = llvm::dyn_cast<gpt::AdamwUpdateOp>(op)) {
    return Call(l, CpuBuiltinName("adamw", u.getGrad()), {Elements(u.getGrad())},
                {u.getBeta1().convertToDouble(), u.getBeta2().convertToDouble(), u.getEps().convertToDouble(),
                 u.getWeightDecay().convertToDouble()},
                {l.BufferOf(u.getParam()), l.BufferOf(u.getGrad()), l.BufferOf(u.getExpAvg()), l.BufferOf(u.getExpAvgSq()),
                 l.BufferOf(u.getLr()), l.BufferOf(u.getStep()), l.result(0), l.result(1), l.result(2)});
  }
  if (auto u = llvm::dyn_cast<gpt::MuonUpdateOp>(op)) return LowerMuonUpdates(l, u, bf16);
  if (llvm::isa<gpt::AllReduceOp, gpt::ReduceScatterOp, gpt::AllGatherOp>(op)) return lowering::LowerCollective(l);
  return op->emitOpError("the cpu target has no kernel for this op; run it with --compile=false (the interpreter)");
}

class LowerToCpuPass : public mlir::PassWrapper<LowerToCpuPass, mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerToCpuPass)

  llvm::StringRef getArgument() const final { return "gpt-lower-to-cpu"; }
  llvm::StringRef getDescription() const final {
    return "Lower planned entry points into launch schedules of the cpu driver's builtins and compiled fusion kernels";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::memref::MemRefDialect, mlir::arith::ArithDialect>();
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::func::FuncOp> planned;
    for (auto func : getOperation().getOps<mlir::func::FuncOp>()) {
      if (!func.isDeclaration() && func->hasAttr(lowering::kArenaBytesAttr)) planned.push_back(func);
    }
    for (mlir::func::FuncOp func : planned) {
      if (failed(lowering::LowerPlannedFunction(func, kCpuBufferAlignment, LowerOp))) return signalPassFailure();
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateLowerToCpuPass() { return std::make_unique<LowerToCpuPass>(); }

void RegisterLowerToCpuPass() { mlir::PassRegistration<LowerToCpuPass>(); }

}  // namespace gpt_sft::compiler
