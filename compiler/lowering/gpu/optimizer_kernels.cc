//===- optimizer_kernels.cc - GPU kernels for AdamW and Muon --------------===//
//
// This file implements EmitOptimizer, the updates of runtime/kernels/cpu/optimizers.cc on a
// GPU, element arithmetic in f64 as there (the stored values are rounded to f32 at the same
// points), so the two paths agree to rounding:
//   adamw_update  one element-wise kernel; lr and step are read from their 1-element
//                 buffers (the step is >= 1: the runtime uploads steps taken + 1);
//   muon_update   1. momentum and Nesterov (element-wise; the Nesterov gradient to scratch);
//                 2. its sum of squares (per-workgroup partials, then one workgroup) and
//                    1 / (|G|_F + 1e-7);
//                 3. X = G / |G|, transposed when G is tall, so X is [r, n], r <= n;
//                 4. five Newton-Schulz steps on the tiled gemm: A = X X^T;
//                    B = c A A + b A; X' = a X + B X (ping-pong buffers);
//                 5. p -= lr sqrt(max(1, R/S)) X (transposed back).
// Results land in the results' buffers, which the plan usually donated (in place).
//
//===----------------------------------------------------------------------===//

#include <cmath>

#include "compiler/dialect/gpt_ops.h"
#include "compiler/lowering/gpu/gemm.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;

constexpr int64_t kBlock = 256;

int64_t GridFor(int64_t n) { return std::min<int64_t>(CeilDiv(n, kBlock), 4096); }

/// A grid-stride loop over [0, n), one launch.
void ElementwiseLaunch(mlir::OpBuilder& host, mlir::Location loc, llvm::StringRef name, int64_t n,
                       llvm::function_ref<void(KernelBuilder&, Value)> body) {
  const int64_t grid = GridFor(n);
  EmitLaunch(host, loc, name, {grid, 1, 1}, {kBlock, 1, 1}, {}, [&](KernelBuilder& k, mlir::ValueRange) {
    k.For(k.GlobalId(), k.Index(n), k.Index(grid * kBlock), [&](Value i) { body(k, i); });
  });
}

mlir::LogicalResult EmitAdamW(lowering::OpLowering& lowering, gpt::AdamwUpdateOp u) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  auto flat = [&](Value tensor) { return Flatten(host, loc, lowering.BufferOf(tensor)); };
  Value p = flat(u.getParam()), g = flat(u.getGrad()), m = flat(u.getExpAvg()), v = flat(u.getExpAvgSq());
  Value lr = flat(u.getLr()), step = flat(u.getStep());
  Value np = Flatten(host, loc, lowering.result(0)), nm = Flatten(host, loc, lowering.result(1)),
        nv = Flatten(host, loc, lowering.result(2));
  const double beta1 = u.getBeta1().convertToDouble(), beta2 = u.getBeta2().convertToDouble(),
               eps = u.getEps().convertToDouble(), wd = u.getWeightDecay().convertToDouble();
  const int64_t n = llvm::cast<mlir::MemRefType>(g.getType()).getNumElements();
  ElementwiseLaunch(host, loc, "adamw", n, [&](KernelBuilder& k, Value i) {
    mlir::Type f64 = k.b().getF64Type(), f32 = k.b().getF32Type();
    auto d = [&](double x) { return k.Float(f64, x); };
    Value t = k.FCast(k.Load(step, {k.Index(0)}), f64), rate = k.FCast(k.Load(lr, {k.Index(0)}), f64);
    Value bias1 = k.FSub(d(1), k.b().create<mlir::math::PowFOp>(d(beta1), t));
    Value bias2 = k.FSub(d(1), k.b().create<mlir::math::PowFOp>(d(beta2), t));
    Value step_size = k.FDiv(rate, bias1), sqrt_bias2 = k.Sqrt(bias2);
    Value decay = k.FSub(d(1), k.FMul(rate, d(wd)));
    Value gi = k.FCast(k.Load(g, {i}), f64);
    Value mi = k.FAdd(k.FMul(d(beta1), k.FCast(k.Load(m, {i}), f64)), k.FMul(d(1 - beta1), gi));
    Value vi = k.FAdd(k.FMul(d(beta2), k.FCast(k.Load(v, {i}), f64)), k.FMul(k.FMul(d(1 - beta2), gi), gi));
    Value update = k.FDiv(k.FMul(step_size, mi), k.FAdd(k.FDiv(k.Sqrt(vi), sqrt_bias2), d(eps)));
    Value pi = k.FSub(k.FMul(k.FCast(k.Load(p, {i}), f64), decay), update);
    k.Store(k.FCast(mi, f32), nm, {i});
    k.Store(k.FCast(vi, f32), nv, {i});
    k.Store(k.FCast(pi, f32), np, {i});
  });
  return mlir::success();
}

/// 1 / (sqrt(sum of squares of `x`) + 1e-7) into inv[0]: per-workgroup partial sums, then
/// one workgroup sums them (a fixed order: deterministic).
void EmitInverseNorm(lowering::OpLowering& lowering, Value x, int64_t n, Value inv) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  mlir::Type f32 = host.getF32Type();
  mlir::MLIRContext* ctx = host.getContext();
  const int64_t parts = std::min<int64_t>(64, CeilDiv(n, kBlock));
  Value partial = lowering.Scratch(mlir::MemRefType::get({parts}, f32));
  EmitLaunch(host, loc, "muon_norm_partial", {parts, 1, 1}, {kBlock, 1, 1}, {WorkgroupMemRef(ctx, {kBlock}, f32)},
             [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value sum = k.For(k.GlobalId(), k.Index(n), k.Index(parts * kBlock), {k.F32(0.0)},
                                 [&](Value i, mlir::ValueRange acc) {
                                   Value e = k.Load(x, {i});
                                   return llvm::SmallVector<Value>{k.Fma(e, e, acc[0])};
                                 })[0];
               Value total = k.WorkgroupReduce(sum, wg[0], KernelBuilder::Reduction::kSum);
               k.If(k.Eq(k.ThreadId(0), k.Index(0)), [&] { k.Store(total, partial, {k.BlockId(0)}); });
             });
  EmitLaunch(host, loc, "muon_norm", {1, 1, 1}, {64, 1, 1}, {WorkgroupMemRef(ctx, {64}, f32)},
             [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value mine = k.IfElse(k.Lt(k.ThreadId(0), k.Index(parts)), {f32},
                                     [&] { return llvm::SmallVector<Value>{k.Load(partial, {k.ThreadId(0)})}; },
                                     [&] { return llvm::SmallVector<Value>{k.F32(0.0)}; })[0];
               Value total = k.WorkgroupReduce(mine, wg[0], KernelBuilder::Reduction::kSum);
               k.If(k.Eq(k.ThreadId(0), k.Index(0)), [&] {
                 k.Store(k.FDiv(k.F32(1.0), k.FAdd(k.Sqrt(total), k.F32(1e-7))), inv, {k.Index(0)});
               });
             });
}

mlir::LogicalResult EmitMuon(lowering::OpLowering& lowering, gpt::MuonUpdateOp u) {
  if (!u.getNesterov() || u.getNsSteps() != 5) {
    return u.emitOpError("gpt-lower-to-gpu: the Muon kernels run Nesterov Muon with 5 Newton-Schulz steps");
  }
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  mlir::Type f32 = host.getF32Type();
  auto flat = [&](Value tensor) { return Flatten(host, loc, lowering.BufferOf(tensor)); };
  Value p = flat(u.getParam()), g = flat(u.getGrad()), buf = flat(u.getMomentumBuffer()), lr = flat(u.getLr());
  Value np = Flatten(host, loc, lowering.result(0)), nbuf = Flatten(host, loc, lowering.result(1));
  auto type = llvm::cast<mlir::ShapedType>(u.getGrad().getType());
  const int64_t R = type.getDimSize(0), S = type.getDimSize(1), n_elems = R * S;
  const bool tall = R > S;
  const int64_t r = tall ? S : R, n = tall ? R : S;  // X is [r, n]
  const double mu = u.getMomentum().convertToDouble();
  constexpr double a = 3.4445, b = -4.7750, c = 2.0315;

  Value nesterov = lowering.Scratch(mlir::MemRefType::get({n_elems}, f32));
  ElementwiseLaunch(host, loc, "muon_momentum", n_elems, [&](KernelBuilder& k, Value i) {
    mlir::Type f64 = k.b().getF64Type();
    Value gi = k.FCast(k.Load(g, {i}), f64);
    Value bi = k.FCast(k.FCast(k.FAdd(k.FMul(k.Float(f64, mu), k.FCast(k.Load(buf, {i}), f64)),
                                      k.FMul(k.Float(f64, 1 - mu), gi)),
                               f32),
                       f64);  // rounded to f32 as stored, then read back
    k.Store(k.FCast(bi, f32), nbuf, {i});
    k.Store(k.FCast(k.FAdd(k.FMul(k.Float(f64, 1 - mu), gi), k.FMul(k.Float(f64, mu), bi)), f32), nesterov, {i});
  });
  Value inv = lowering.Scratch(mlir::MemRefType::get({1}, f32));
  EmitInverseNorm(lowering, nesterov, n_elems, inv);
  Value x = lowering.Scratch(mlir::MemRefType::get({r * n}, f32));
  Value x_next = lowering.Scratch(mlir::MemRefType::get({r * n}, f32));
  Value A = lowering.Scratch(mlir::MemRefType::get({r * r}, f32));
  Value B = lowering.Scratch(mlir::MemRefType::get({r * r}, f32));
  ElementwiseLaunch(host, loc, "muon_normalize", n_elems, [&](KernelBuilder& k, Value e) {
    Value i = k.Div(e, k.Index(S)), j = k.Rem(e, k.Index(S));  // G[i, j]
    Value to = tall ? k.Add(k.Mul(j, k.Index(n)), i) : e;
    k.Store(k.FMul(k.Load(nesterov, {e}), k.Load(inv, {k.Index(0)})), x, {to});
  });
  for (int step = 0; step < 5; ++step) {
    EmitGemm(host, loc, {"muon_gram", r, r, n, {x, false}, {x, true}, A});                  // A = X X^T
    EmitGemm(host, loc, {"muon_poly", r, r, r, {A, false}, {A, false}, B, c, b, A});       // B = c A A + b A
    EmitGemm(host, loc, {"muon_apply", r, n, r, {B, false}, {x, false}, x_next, 1.0, a, x});  // X' = a X + B X
    std::swap(x, x_next);
  }
  ElementwiseLaunch(host, loc, "muon_update", n_elems, [&](KernelBuilder& k, Value e) {
    mlir::Type f64 = k.b().getF64Type();
    Value i = k.Div(e, k.Index(S)), j = k.Rem(e, k.Index(S));
    Value from = tall ? k.Add(k.Mul(j, k.Index(n)), i) : e;
    Value scale = k.FMul(k.FCast(k.Load(lr, {k.Index(0)}), f64),
                         k.Float(f64, std::sqrt(std::max(1.0, double(R) / double(S)))));
    Value updated = k.FSub(k.FCast(k.Load(p, {e}), f64), k.FMul(scale, k.FCast(k.Load(x, {from}), f64)));
    k.Store(k.FCast(updated, f32), np, {e});
  });
  return mlir::success();
}

}  // namespace

mlir::LogicalResult EmitOptimizer(lowering::OpLowering& lowering) {
  mlir::Operation* op = lowering.op();
  for (mlir::Type t : op->getOperandTypes()) {
    if (!llvm::cast<mlir::ShapedType>(t).getElementType().isF32()) {
      return op->emitOpError("gpt-lower-to-gpu: the optimizer kernels run f32 parameters and state");
    }
  }
  if (auto u = llvm::dyn_cast<gpt::AdamwUpdateOp>(op)) return EmitAdamW(lowering, u);
  return EmitMuon(lowering, llvm::cast<gpt::MuonUpdateOp>(op));
}

}  // namespace gpt_sft::compiler::gpu_lowering
