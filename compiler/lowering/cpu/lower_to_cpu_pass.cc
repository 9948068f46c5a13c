//===- lower_to_cpu_pass.cc - gpt-lower-to-cpu ----------------------------===//
//
// This file implements the cpu target's lowering: every planned entry point becomes its
// launch schedule (LowerPlannedFunction, 64-byte buffers) where
//   * a fusion (a linalg.generic that CompileFusionKernels tagged gpt.kernel) is a
//     gpt.launch_host_kernel of its compiled range kernel over its elements;
//   * every other op is a gpt.call_builtin of the cpu driver's library kernel
//     (runtime/device/cpu/BUILTINS.md: the name "cpu.<op>.<f32|f64>", the dims and
//     attributes as scalars first, then the buffers);
//   * rotary rotates by nanochat's cos/sin tables baked in as constants (the tabled builtins),
//     and a rotary with its QK-norm right after it is one pass (rotary_rms_norm), as is the
//     norm's gradient with the rotary's (rms_norm_rotary_grad);
//   * a softcap with the cross_entropy of its result right after it is one pass
//     (softcap_cross_entropy); a residual add with the rms_norm of its sum right after it too
//     (add_rms_norm), and an rms_norm_grad with the add that joins it to the residual
//     gradient (rms_norm_grad_add); a run of adds (the gradient accumulation's) is one
//     add_list launch;
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

#include "compiler/dialect/autocast.h"
#include "compiler/dialect/gpt_ops.h"
#include "compiler/lowering/collective_lowering.h"
#include "compiler/lowering/planned_function.h"
#include "compiler/lowering/rotary_table_constants.h"
#include "compiler/lowering/softcap_epilogue.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace gpt_sft::compiler {
namespace {

using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::success;
using ::mlir::Value;
using lowering::OpLowering;

constexpr int64_t kCpuBufferAlignment = 64;
/// rms_norm_grad_add's rows live on its stack (runtime/kernels/cpu/residual_rms_norm.h).
constexpr int64_t kMaxResidualRmsNormDim = 4096;
/// add_list takes at most this many adds (runtime/device/cpu/host_builtins.cc).
constexpr int64_t kMaxAddList = 1024;

mlir::ShapedType TypeOf(Value v) { return llvm::cast<mlir::ShapedType>(v.getType()); }
int64_t Dim(Value v, int64_t i) { return TypeOf(v).getDimSize(i < 0 ? TypeOf(v).getRank() + i : i); }
int64_t Elements(Value v) { return TypeOf(v).getNumElements(); }
int64_t Rows(Value v) { return Elements(v) / Dim(v, -1); }

/// "cpu.<name>.f32" / ".f64" after `typed`'s element type; empty for any other.
std::string Builtin(const std::string& name, Value typed) {
  mlir::Type t = TypeOf(typed).getElementType();
  if (t.isF32()) return "cpu." + name + ".f32";
  if (t.isF64()) return "cpu." + name + ".f64";
  return "";
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

/// The add that joins an rms_norm_grad's result to the residual gradient: the very next op
/// and the gradient's only user, the other operand of the same type, the norm's rows at most
/// kMaxResidualRmsNormDim long (the kernel's stack row), every pair of x, dy, r and the
/// add's result the same bytes or disjoint.
gpt::AddOp ResidualAddAfter(OpLowering& l, gpt::RmsNormGradOp n) {
  auto add = llvm::dyn_cast_or_null<gpt::AddOp>(n->getNextNode());
  const Value g = n.getResult();
  if (!add || !g.hasOneUse() || (add.getLhs() != g && add.getRhs() != g) || add.getLhs() == add.getRhs()) return {};
  if (add.getLhs().getType() != add.getRhs().getType() || add.getResult().getType() != g.getType()) return {};
  if (Dim(n.getX(), -1) > kMaxResidualRmsNormDim) return {};
  const Value r = add.getLhs() == g ? add.getRhs() : add.getLhs(), out = add.getResult();
  for (Value v : {Value(n.getX()), Value(n.getDy()), r}) {
    if (!SameOrDisjointBytes(l, v, out)) return {};
  }
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

llvm::SmallVector<int64_t> RotaryDims(Value in) { return {Dim(in, 0), Dim(in, 1), Dim(in, 2), Dim(in, 3), Dim(in, 1)}; }

/// A rotary followed by its QK-norm is one pass (rotary_rms_norm), which absorbs the norm.
template <typename Op>
LogicalResult LowerRotary(OpLowering& l, Op r, Value in, bool grad) {
  if (Dim(in, 3) % 2 != 0) return r.emitOpError("head dim must be even");
  const auto [positions, cos, sin] = RotaryTableBuffers(l, r, in);
  if constexpr (std::is_same_v<Op, gpt::RotaryOp>) {
    if (gpt::RmsNormOp norm = QkNormAfter(l, r)) {
      l.Absorb(norm);
      return Call(l, Builtin("rotary_rms_norm", in), RotaryDims(in), {norm.getEps().convertToDouble()},
                  {l.BufferOf(in), positions, cos, sin, l.result(0), l.BufferOf(norm.getResult())});
    }
  }
  const std::string name = std::string(grad ? "rotary_grad_tables" : "rotary_tables") + (r.getRoundBf16() ? "_bf16" : "");
  return Call(l, Builtin(name, in), RotaryDims(in), {}, {l.BufferOf(in), positions, cos, sin, l.result(0)});
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
    return Call(l, Builtin("rms_norm_rotary_grad", in), RotaryDims(in), {eps},
                {l.BufferOf(n.getX()), l.BufferOf(n.getDy()), positions, cos, sin, l.BufferOf(grad.getResult())});
  }
  if (gpt::AddOp add = ResidualAddAfter(l, n)) {
    Value r = add.getLhs() == n.getResult() ? add.getRhs() : add.getLhs();
    l.Absorb(add);
    return Call(l, Builtin("rms_norm_grad_add", n.getX()), {Rows(n.getX()), Dim(n.getX(), -1)}, {eps},
                {l.BufferOf(n.getX()), l.BufferOf(n.getDy()), l.BufferOf(r), l.BufferOf(add.getResult())});
  }
  return Call(l, Builtin("rms_norm_grad", n.getX()), {Rows(n.getX()), Dim(n.getX(), -1)}, {eps},
              {l.BufferOf(n.getX()), l.BufferOf(n.getDy()), l.result(0)});
}

/// add; when the rms_norm of its sum follows, both in one pass (add_rms_norm).
LogicalResult LowerAdd(OpLowering& l, gpt::AddOp add) {
  if (gpt::RmsNormOp norm = NormAfter(l, add)) {
    l.Absorb(norm);
    return Call(l, Builtin("add_rms_norm", add.getResult()), {Rows(add.getResult()), Dim(add.getResult(), -1)},
                {norm.getEps().convertToDouble()},
                {l.BufferOf(add.getLhs()), l.BufferOf(add.getRhs()), l.result(0), l.BufferOf(norm.getResult())});
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
    return Call(l, Builtin("add_list", add.getResult()), ints, {}, buffers);
  }
  llvm::SmallVector<Value> buffers = {l.BufferOf(add.getLhs()), l.BufferOf(add.getRhs()), l.result(0)};
  return Call(l, Builtin("add", add.getResult()), {Elements(add.getResult())}, {}, buffers);
}

template <typename Op>
LogicalResult CheckAttention(Op a) {
  if (!a.getCausal() || a.getScale()) return a.emitOpError("the cpu target runs causal attention at the default scale");
  return success();
}

llvm::SmallVector<int64_t> AttentionDims(Value q, Value k, Value segments) {
  return {Dim(q, 0), Dim(q, 1), Dim(q, 2), Dim(k, 2), Dim(q, 3), segments ? 1 : 0};
}

/// "attention" or "attention_grad"; under bf16 autocast (f32 only) its bf16 builtin, whose
/// q, k, v, dout are bf16 values (bf16 tile products, P and dS rounded as flash attention
/// does), the kernel the interpreter runs for the same op.
std::string AttentionBuiltin(mlir::Operation* op, const std::string& name, Value q) {
  const bool bf16 = UnderBf16Autocast(op) && TypeOf(q).getElementType().isF32();
  return Builtin(name + (bf16 ? "_bf16" : ""), q);
}

LogicalResult LowerAttention(OpLowering& l, gpt::AttentionOp a) {
  if (failed(CheckAttention(a))) return failure();
  const int64_t lse_elements = Dim(a.getQ(), 0) * Dim(a.getQ(), 2) * Dim(a.getQ(), 1);
  Value lse = l.Persistent(mlir::MemRefType::get({lse_elements}, TypeOf(a.getQ()).getElementType()), a.getResult());
  llvm::SmallVector<Value> buffers = {l.BufferOf(a.getQ()), l.BufferOf(a.getK()), l.BufferOf(a.getV())};
  if (a.getSegmentIds()) buffers.push_back(l.BufferOf(a.getSegmentIds()));
  buffers.append({l.result(0), lse});
  return Call(l, AttentionBuiltin(a, "attention", a.getQ()), AttentionDims(a.getQ(), a.getK(), a.getSegmentIds()),
              {}, buffers);
}

LogicalResult LowerAttentionGrad(OpLowering& l, gpt::AttentionGradOp a) {
  if (failed(CheckAttention(a))) return failure();
  const llvm::SmallVector<int64_t> dims = AttentionDims(a.getQ(), a.getK(), a.getSegmentIds());
  llvm::SmallVector<Value> inputs = {l.BufferOf(a.getQ()), l.BufferOf(a.getK()), l.BufferOf(a.getV())};
  if (a.getSegmentIds()) inputs.push_back(l.BufferOf(a.getSegmentIds()));
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
    Value out = l.Scratch(mlir::MemRefType::get({Elements(a.getQ())}, f));
    llvm::SmallVector<Value> forward = inputs;
    forward.append({out, lse});
    if (failed(Call(l, AttentionBuiltin(a, "attention", a.getQ()), dims, {}, forward))) return failure();
  }
  llvm::SmallVector<Value> buffers = inputs;
  buffers.append({l.BufferOf(a.getOut()), lse, l.BufferOf(a.getDout()), l.result(0), l.result(1), l.result(2)});
  return Call(l, AttentionBuiltin(a, "attention_grad", a.getQ()), dims, {}, buffers);
}

/// The cross_entropy a softcap's loss fusion absorbs: after the softcap with nothing but
/// reshapes between, reading the softcap's result (through reshapes) as its logits, with
/// ignore index -1, the softcap's input and result the same bytes or disjoint.
gpt::CrossEntropyOp LossAfter(OpLowering& l, gpt::SoftcapOp softcap) {
  mlir::Operation* next = softcap->getNextNode();
  while (llvm::isa_and_nonnull<gpt::ReshapeOp>(next)) next = next->getNextNode();
  auto ce = llvm::dyn_cast_or_null<gpt::CrossEntropyOp>(next);
  if (!ce || ce.getIgnoreIndex() != -1) return {};
  Value logits = ce.getLogits();
  while (auto r = logits.getDefiningOp<gpt::ReshapeOp>()) logits = r.getX();
  if (logits != softcap.getResult()) return {};
  if (!SameOrDisjointBytes(l, softcap.getX(), softcap.getResult())) return {};
  return ce;
}

/// softcap; when its cross_entropy follows, both in one pass (softcap_cross_entropy).
LogicalResult LowerSoftcap(OpLowering& l, gpt::SoftcapOp e) {
  // gpt-fuse makes every bf16 softcap a fusion; the builtin is the f32 one.
  if (e.getRoundBf16()) return e.emitOpError("the cpu target runs a round_bf16 softcap only inside a fusion");
  const double cap = e.getCap().convertToDouble();
  if (gpt::CrossEntropyOp ce = LossAfter(l, e)) {
    const int64_t N = Dim(ce.getLogits(), 0), V = Dim(ce.getLogits(), 1);
    l.RequireArgumentRange(ce.getTargets(), -1, V);
    l.Absorb(ce);
    // The targets as the step has them: a reshape of them between the two ops may be a copy
    // that runs after this launch, and a reshape changes no byte.
    Value targets = ce.getTargets();
    while (auto r = targets.getDefiningOp<gpt::ReshapeOp>()) targets = r.getX();
    return Call(l, Builtin("softcap_cross_entropy", e.getX()), {N, V}, {cap},
                {l.BufferOf(e.getX()), l.BufferOf(targets), l.result(0), l.BufferOf(ce.getResult())});
  }
  return Call(l, Builtin("softcap", e.getResult()), {Elements(e.getResult())}, {cap},
              {l.BufferOf(e.getX()), l.result(0)});
}

LogicalResult LowerCrossEntropyGrad(OpLowering& l, gpt::CrossEntropyGradOp ce) {
  if (ce.getIgnoreIndex() != -1) return ce.emitOpError("the cpu target ignores target -1 only");
  const int64_t N = Dim(ce.getLogits(), 0), V = Dim(ce.getLogits(), 1);
  Value out = l.result(0), targets = l.BufferOf(ce.getTargets()), dloss = l.BufferOf(ce.getDloss());
  double cap = 0;
  // The library kernel overwrites a row before it reads it again: logits and output must not
  // share any byte.
  if (auto epilogue = lowering::FuseSoftcapEpilogue(l, ce, /*allow_same_bytes=*/false)) {
    cap = epilogue->cap;
    out = epilogue->out;
    targets = epilogue->targets;
    dloss = epilogue->dloss;
  }
  return Call(l, Builtin("cross_entropy_grad", ce.getLogits()), {N, V}, {cap},
              {l.BufferOf(ce.getLogits()), targets, dloss, out});
}

LogicalResult LowerTranspose(OpLowering& l, gpt::TransposeOp t) {
  const int64_t rank = TypeOf(t.getX()).getRank();
  if (rank < 1 || rank > 8) return t.emitOpError("the cpu target transposes ranks 1 to 8");
  llvm::SmallVector<int64_t> ints = {rank};
  for (int64_t i = 0; i < 8; ++i) ints.push_back(i < rank ? Dim(t.getX(), i) : 1);
  for (int64_t i = 0; i < 8; ++i) ints.push_back(i < rank ? t.getPerm()[i] : i);
  const unsigned bits = TypeOf(t.getX()).getElementTypeBitWidth();
  if (bits != 32 && bits != 64) return t.emitOpError("the cpu target transposes 4- and 8-byte elements");
  return Call(l, bits == 32 ? "cpu.permute.b32" : "cpu.permute.b64", ints, {}, {l.BufferOf(t.getX()), l.result(0)});
}

LogicalResult LowerOp(OpLowering& l) {
  mlir::Operation* op = l.op();
  auto pointwise = [&](const char* name, llvm::ArrayRef<Value> in, llvm::ArrayRef<double> floats) {
    llvm::SmallVector<Value> buffers;
    for (Value v : in) buffers.push_back(l.BufferOf(v));
    buffers.push_back(l.result(0));
    return Call(l, Builtin(name, op->getResult(0)), {Elements(op->getResult(0))}, floats, buffers);
  };
  if (auto g = llvm::dyn_cast<mlir::linalg::GenericOp>(op)) return LowerFusion(l, g);
  if (auto e = llvm::dyn_cast<gpt::EmbeddingOp>(op)) {
    l.RequireArgumentRange(e.getIds(), 0, Dim(e.getTable(), 0));
    return Call(l, Builtin("embedding", e.getTable()), {Dim(e.getTable(), 0), Dim(e.getTable(), 1), Elements(e.getIds())},
                {}, {l.BufferOf(e.getTable()), l.BufferOf(e.getIds()), l.result(0)});
  }
  if (auto e = llvm::dyn_cast<gpt::EmbeddingGradOp>(op)) {
    return Call(l, Builtin("embedding_grad", e.getDy()),
                {static_cast<int64_t>(e.getVocabSize()), Dim(e.getDy(), -1), Elements(e.getIds())}, {},
                {l.BufferOf(e.getIds()), l.BufferOf(e.getDy()), l.result(0)});
  }
  // Under bf16 autocast a matmul's inputs are bf16 values: its builtin runs bf16 dot products.
  const std::string bf16 = UnderBf16Autocast(op) ? "_bf16" : "";
  if (auto m = llvm::dyn_cast<gpt::MatmulOp>(op)) {
    return Call(l, Builtin("matmul" + bf16, m.getX()), {Rows(m.getX()), Dim(m.getW(), 0), Dim(m.getW(), 1)}, {},
                {l.BufferOf(m.getX()), l.BufferOf(m.getW()), l.result(0)});
  }
  if (auto m = llvm::dyn_cast<gpt::MatmulWeightGradOp>(op)) {
    return Call(l, Builtin("matmul_weight_grad" + bf16, m.getX()),
                {Rows(m.getX()), Dim(m.getDy(), -1), Dim(m.getX(), -1)}, {},
                {l.BufferOf(m.getDy()), l.BufferOf(m.getX()), l.result(0)});
  }
  if (auto n = llvm::dyn_cast<gpt::RmsNormOp>(op)) {
    return Call(l, Builtin("rms_norm", n.getX()), {Rows(n.getX()), Dim(n.getX(), -1)}, {n.getEps().convertToDouble()},
                {l.BufferOf(n.getX()), l.result(0)});
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
  if (auto e = llvm::dyn_cast<gpt::SoftcapGradOp>(op)) {
    return pointwise("softcap_grad", {e.getY(), e.getDy()}, {e.getCap().convertToDouble()});
  }
  if (auto ce = llvm::dyn_cast<gpt::CrossEntropyOp>(op)) {
    if (ce.getIgnoreIndex() != -1) return ce.emitOpError("the cpu target ignores target -1 only");
    l.RequireArgumentRange(ce.getTargets(), -1, Dim(ce.getLogits(), 1));
    return Call(l, Builtin("cross_entropy", ce.getLogits()), {Dim(ce.getLogits(), 0), Dim(ce.getLogits(), 1)}, {},
                {l.BufferOf(ce.getLogits()), l.BufferOf(ce.getTargets()), l.result(0)});
  }
  if (auto ce = llvm::dyn_cast<gpt::CrossEntropyGradOp>(op)) return LowerCrossEntropyGrad(l, ce);
  if (auto t = llvm::dyn_cast<gpt::TransposeOp>(op)) return LowerTranspose(l, t);
  if (auto u = llvm::dyn_cast<gpt::AdamwUpdateOp>(op)) {
    return Call(l, Builtin("adamw", u.getGrad()), {Elements(u.getGrad())},
                {u.getBeta1().convertToDouble(), u.getBeta2().convertToDouble(), u.getEps().convertToDouble(),
                 u.getWeightDecay().convertToDouble()},
                {l.BufferOf(u.getParam()), l.BufferOf(u.getGrad()), l.BufferOf(u.getExpAvg()), l.BufferOf(u.getExpAvgSq()),
                 l.BufferOf(u.getLr()), l.BufferOf(u.getStep()), l.result(0), l.result(1), l.result(2)});
  }
  if (auto u = llvm::dyn_cast<gpt::MuonUpdateOp>(op)) {
    if (!u.getNesterov() || u.getNsSteps() != 5) {
      return u.emitOpError("the cpu target runs Nesterov Muon with 5 Newton-Schulz steps");
    }
    return Call(l, Builtin("muon", u.getGrad()), {Dim(u.getGrad(), 0), Dim(u.getGrad(), 1)},
                {u.getMomentum().convertToDouble()},
                {l.BufferOf(u.getParam()), l.BufferOf(u.getGrad()), l.BufferOf(u.getMomentumBuffer()),
                 l.BufferOf(u.getLr()), l.result(0), l.result(1)});
  }
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
