//===- lower_to_cpu_pass.cc - gpt-lower-to-cpu ----------------------------===//
//
// This file implements the cpu target's lowering: every planned entry point becomes its
// launch schedule (LowerPlannedFunction, 64-byte buffers) where
//   * a fusion (a linalg.generic that CompileFusionKernels tagged gpt.kernel) is a
//     gpt.launch_host_kernel of its compiled range kernel over its elements;
//   * every other op is a gpt.call_builtin of the cpu driver's library kernel
//     (runtime/device/cpu/BUILTINS.md: the name "cpu.<op>.<f32|f64>", the dims and
//     attributes as scalars first, then the buffers);
//   * the compiler's decisions the runtime used to make at load: the softcap gradient fused
//     into the cross-entropy's (softcap_epilogue.h), attention's log-sum-exp kept for the
//     backward (Persistent) or recomputed into scratch, positions 0..T-1 as a constant when
//     rotary has none, the transpose's dims and permutation, copies for reshapes.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/cpu/lower_to_cpu_pass.h"

#include <string>

#include "compiler/dialect/autocast.h"
#include "compiler/dialect/gpt_ops.h"
#include "compiler/lowering/collective_lowering.h"
#include "compiler/lowering/planned_function.h"
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

/// round_bf16 (nanochat's bf16 rotary) is its own builtin, rotary_bf16 / rotary_grad_bf16.
template <typename Op>
LogicalResult LowerRotary(OpLowering& l, Op r, Value in, bool grad) {
  const int64_t B = Dim(in, 0), T = Dim(in, 1), H = Dim(in, 2), D = Dim(in, 3);
  if (D % 2 != 0) return r.emitOpError("head dim must be even");
  Value positions = r.getPositions() ? l.BufferOf(r.getPositions()) : Iota(l, B, T);
  const std::string name = std::string(grad ? "rotary_grad" : "rotary") + (r.getRoundBf16() ? "_bf16" : "");
  return Call(l, Builtin(name, in), {B, T, H, D}, {r.getBase().convertToDouble()},
              {l.BufferOf(in), positions, l.result(0)});
}

template <typename Op>
LogicalResult CheckAttention(Op a) {
  if (!a.getCausal() || a.getScale()) return a.emitOpError("the cpu target runs causal attention at the default scale");
  return success();
}

llvm::SmallVector<int64_t> AttentionDims(Value q, Value k, Value segments) {
  return {Dim(q, 0), Dim(q, 1), Dim(q, 2), Dim(k, 2), Dim(q, 3), segments ? 1 : 0};
}

LogicalResult LowerAttention(OpLowering& l, gpt::AttentionOp a) {
  if (failed(CheckAttention(a))) return failure();
  const int64_t lse_elements = Dim(a.getQ(), 0) * Dim(a.getQ(), 2) * Dim(a.getQ(), 1);
  Value lse = l.Persistent(mlir::MemRefType::get({lse_elements}, TypeOf(a.getQ()).getElementType()), a.getResult());
  llvm::SmallVector<Value> buffers = {l.BufferOf(a.getQ()), l.BufferOf(a.getK()), l.BufferOf(a.getV())};
  if (a.getSegmentIds()) buffers.push_back(l.BufferOf(a.getSegmentIds()));
  buffers.append({l.result(0), lse});
  return Call(l, Builtin("attention", a.getQ()), AttentionDims(a.getQ(), a.getK(), a.getSegmentIds()), {}, buffers);
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
    if (failed(Call(l, Builtin("attention", a.getQ()), dims, {}, forward))) return failure();
  }
  llvm::SmallVector<Value> buffers = inputs;
  buffers.append({l.BufferOf(a.getOut()), lse, l.BufferOf(a.getDout()), l.result(0), l.result(1), l.result(2)});
  return Call(l, Builtin("attention_grad", a.getQ()), dims, {}, buffers);
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
  if (auto n = llvm::dyn_cast<gpt::RmsNormGradOp>(op)) {
    return Call(l, Builtin("rms_norm_grad", n.getX()), {Rows(n.getX()), Dim(n.getX(), -1)},
                {n.getEps().convertToDouble()}, {l.BufferOf(n.getX()), l.BufferOf(n.getDy()), l.result(0)});
  }
  if (auto r = llvm::dyn_cast<gpt::RotaryOp>(op)) return LowerRotary(l, r, r.getX(), false);
  if (auto r = llvm::dyn_cast<gpt::RotaryGradOp>(op)) return LowerRotary(l, r, r.getDy(), true);
  if (auto a = llvm::dyn_cast<gpt::AttentionOp>(op)) return LowerAttention(l, a);
  if (auto a = llvm::dyn_cast<gpt::AttentionGradOp>(op)) return LowerAttentionGrad(l, a);
  if (auto e = llvm::dyn_cast<gpt::AddOp>(op)) return pointwise("add", {e.getLhs(), e.getRhs()}, {});
  if (auto e = llvm::dyn_cast<gpt::MulOp>(op)) return pointwise("mul", {e.getLhs(), e.getRhs()}, {});
  if (auto e = llvm::dyn_cast<gpt::ReluSquareOp>(op)) return pointwise("relu_square", {e.getX()}, {});
  if (auto e = llvm::dyn_cast<gpt::ReluSquareGradOp>(op)) return pointwise("relu_square_grad", {e.getX(), e.getDy()}, {});
  if (auto e = llvm::dyn_cast<gpt::SoftcapOp>(op)) {
    // gpt-fuse makes every bf16 softcap a fusion; the builtin is the f32 one.
    if (e.getRoundBf16()) return e.emitOpError("the cpu target runs a round_bf16 softcap only inside a fusion");
    return pointwise("softcap", {e.getX()}, {e.getCap().convertToDouble()});
  }
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
