//===- optimizer_kernels.cc - GPU kernels for AdamW and Muon --------------===//
//
// This file implements EmitOptimizer, the updates of runtime/kernels/cpu/optimizers.cc on a
// GPU, element arithmetic in f64 as there (the stored values are rounded to f32 at the same
// points), so the two paths agree to rounding:
//   adamw_update  one element-wise kernel (grid-stride, 256 work-items); lr and step are read
//                 from their rank-0 buffers and the bias corrections computed once per
//                 work-item, before its loop; the step is rounded to an integer like the CPU's
//                 llround. The CPU refuses step < 1 (bias correction 1 - b^0 = 0); a kernel
//                 cannot fail, so there the update is a no-op: the results are the inputs;
//   muon_update   the same-shape updates of the entry point run as one group
//                 (compiler/lowering/muon_group_fusion.h), emitted at the first one's place:
//                 1. per matrix: momentum and Nesterov (element-wise, the Nesterov gradient to
//                    the group's scratch), each workgroup also summing the squares of its
//                    Nesterov elements in f64;
//                 2. per matrix: one workgroup sums those partials in a fixed order
//                    (deterministic) and stores 1 / (|G|_F + 1e-7) in f64, as SumOfSquares +
//                    the CPU's division;
//                 3. per matrix: X = G / |G|, transposed when G is tall, so X is [r, n], r <= n,
//                    matrix m of the group's [count, r, n] scratch;
//                 4. five Newton-Schulz steps in f32, each product one batched gemm over the
//                    whole group, epilogues doing the sums: A = X X^T; B = c A A + b A;
//                    X' = a X + B X (ping-pong buffers): 15 launches for the group (30 with
//                    the vendor gemm's bf16 epilogues), where one matrix at a time took 15 per
//                    matrix;
//                 5. per matrix: p -= lr sqrt(max(1, R/S)) X (transposed back).
//                 Under bf16 autocast (nanochat's Muon): the Nesterov gradient is rounded to
//                 bf16 before its norm, X after the division, and each product's epilogue
//                 result (runtime/kernels/cpu/newton_schulz_bf16.h, the same points); the
//                 gemms are told their inputs are bf16 values.
// Every element's kernel reads all its inputs before writing its results, so a result may
// share its buffer with its own input (the plan donates p, m, v, buf: in place) or not (the
// results' buffers are written from the inputs': no copy needed first).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cmath>

#include "ir/autocast.h"
#include "ir/gpt_ops.h"
#include "compiler/lowering/gpu/gemm.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "compiler/lowering/muon_group_fusion.h"
#include "compiler/transforms/elementwise_scalar.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;

constexpr int64_t kBlock = 256;
constexpr int64_t kMaxGrid = 256;  // grid-stride beyond: also bounds Muon's partial sums
// Where a Muon group's per-matrix buffers start, in bytes (at least any device's base
// alignment for a buffer argument: OpenCL's CL_DEVICE_MEM_BASE_ADDR_ALIGN, 128 on PoCL).
constexpr int64_t kPartAlignment = 256;

int64_t GridFor(int64_t n) { return std::min<int64_t>(CeilDiv(n, kBlock), kMaxGrid); }

/// A grid-stride loop over [0, n), one launch of GridFor(n) workgroups.
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
  const int64_t grid = GridFor(n);
  EmitLaunch(host, loc, "adamw", {grid, 1, 1}, {kBlock, 1, 1}, {}, [&](KernelBuilder& k, mlir::ValueRange) {
    mlir::ImplicitLocOpBuilder& b = k.b();
    mlir::Type f64 = b.getF64Type(), f32 = b.getF32Type();
    auto d = [&](double x) { return k.Float(f64, x); };
    // The step's scalars once per work-item, before its grid-stride loop: the two f64 pows
    // (libdevice's accurate pow, hundreds of instructions each) would otherwise run per element.
    Value raw_t = k.FCast(k.Load(step, {k.Index(0)}), f64);
    // step >= 1 (false for NaN too); t = llround(step) for such steps.
    Value valid = b.create<mlir::arith::CmpFOp>(mlir::arith::CmpFPredicate::OGE, raw_t, d(1));
    Value t = b.create<mlir::math::FloorOp>(k.FAdd(raw_t, d(0.5)));
    Value rate = k.FCast(k.Load(lr, {k.Index(0)}), f64);
    Value bias1 = k.FSub(d(1), b.create<mlir::math::PowFOp>(d(beta1), t));
    Value bias2 = k.FSub(d(1), b.create<mlir::math::PowFOp>(d(beta2), t));
    Value step_size = k.FDiv(rate, bias1), sqrt_bias2 = k.Sqrt(bias2);
    Value decay = k.FSub(d(1), k.FMul(rate, d(wd)));
    k.For(k.GlobalId(), k.Index(n), k.Index(grid * kBlock), [&](Value i) {
      Value g32 = k.Load(g, {i}), m32 = k.Load(m, {i}), v32 = k.Load(v, {i}), p32 = k.Load(p, {i});
      Value gi = k.FCast(g32, f64);
      Value mi = k.FAdd(k.FMul(d(beta1), k.FCast(m32, f64)), k.FMul(d(1 - beta1), gi));
      Value vi = k.FAdd(k.FMul(d(beta2), k.FCast(v32, f64)), k.FMul(k.FMul(d(1 - beta2), gi), gi));
      Value update = k.FDiv(k.FMul(step_size, mi), k.FAdd(k.FDiv(k.Sqrt(vi), sqrt_bias2), d(eps)));
      Value pi = k.FSub(k.FMul(k.FCast(p32, f64), decay), update);
      k.Store(k.Select(valid, k.FCast(mi, f32), m32), nm, {i});
      k.Store(k.Select(valid, k.FCast(vi, f32), v32), nv, {i});
      k.Store(k.Select(valid, k.FCast(pi, f32), p32), np, {i});
    });
  });
  return mlir::success();
}

/// Step 1 of Muon for one matrix: buf = mu buf + (1 - mu) g; nesterov = (1 - mu) g + mu buf
/// (f64, each rounded to f32 where the CPU stores it); partial[w] = sum over workgroup w's
/// elements of nesterov^2 in f64. `bf16`: nesterov is rounded to bf16 (stored and summed so).
void EmitMomentum(lowering::OpLowering& lowering, Value g, Value buf, Value new_buf, Value nesterov, Value partial,
                  int64_t n, double mu, bool bf16) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Type f64 = host.getF64Type(), f32 = host.getF32Type();
  const int64_t grid = GridFor(n);
  EmitLaunch(host, lowering.loc(), "muon_momentum", {grid, 1, 1}, {kBlock, 1, 1},
             {WorkgroupMemRef(host.getContext(), {kBlock}, f64)}, [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value sum = k.For(k.GlobalId(), k.Index(n), k.Index(grid * kBlock), {k.Float(f64, 0.0)},
                                 [&](Value i, mlir::ValueRange acc) {
                                   Value gi = k.FCast(k.Load(g, {i}), f64);
                                   Value b32 = k.FCast(k.FAdd(k.FMul(k.Float(f64, mu), k.FCast(k.Load(buf, {i}), f64)),
                                                              k.FMul(k.Float(f64, 1 - mu), gi)),
                                                       f32);
                                   Value bi = k.FCast(b32, f64);  // rounded as stored, then read back
                                   Value n32 = k.FCast(
                                       k.FAdd(k.FMul(k.Float(f64, 1 - mu), gi), k.FMul(k.Float(f64, mu), bi)), f32);
                                   if (bf16) n32 = EmitRoundToBf16(k.b(), lowering.loc(), n32);
                                   k.Store(b32, new_buf, {i});
                                   k.Store(n32, nesterov, {i});
                                   Value e = k.FCast(n32, f64);
                                   return llvm::SmallVector<Value>{k.FAdd(acc[0], k.FMul(e, e))};
                                 })[0];
               Value total = k.WorkgroupReduce(sum, wg[0], KernelBuilder::Reduction::kSum);
               k.If(k.Eq(k.ThreadId(0), k.Index(0)), [&] { k.Store(total, partial, {k.BlockId(0)}); });
             });
}

/// Step 2 of Muon: inv[0] = 1 / (sqrt(sum of the `parts` partials) + 1e-7), in f64.
void EmitInverseNorm(lowering::OpLowering& lowering, Value partial, int64_t parts, Value inv) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Type f64 = host.getF64Type();
  EmitLaunch(host, lowering.loc(), "muon_norm", {1, 1, 1}, {kBlock, 1, 1},
             {WorkgroupMemRef(host.getContext(), {kBlock}, f64)}, [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value mine = k.For(k.ThreadId(0), k.Index(parts), k.Index(kBlock), {k.Float(f64, 0.0)},
                                  [&](Value i, mlir::ValueRange acc) {
                                    return llvm::SmallVector<Value>{k.FAdd(acc[0], k.Load(partial, {i}))};
                                  })[0];
               Value total = k.WorkgroupReduce(mine, wg[0], KernelBuilder::Reduction::kSum);
               k.If(k.Eq(k.ThreadId(0), k.Index(0)), [&] {
                 Value one = k.Float(f64, 1.0);
                 k.Store(k.FDiv(one, k.FAdd(k.Sqrt(total), k.Float(f64, 1e-7))), inv, {k.Index(0)});
               });
             });
}

/// One matrix's update: its buffers (flat memrefs).
struct MuonMember {
  Value p, g, buf, lr, new_p, new_buf;
};

/// The same-shape updates `group` (MatchMuonGroup; `group[0]` is the op being lowered): per
/// matrix its momentum, norm, X = G / |G| into the group's [count, r, n] scratch and its
/// update; the Newton-Schulz products as one batched gemm each for the whole group.
mlir::LogicalResult EmitMuonGroup(lowering::OpLowering& lowering, llvm::ArrayRef<gpt::MuonUpdateOp> group,
                                  GemmBackend gemm) {
  gpt::MuonUpdateOp u = group.front();
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  mlir::Type f32 = host.getF32Type(), f64 = host.getF64Type();
  auto flat = [&](Value tensor) { return Flatten(host, loc, lowering.BufferOf(tensor)); };
  llvm::SmallVector<MuonMember> members;
  for (gpt::MuonUpdateOp m : group) {
    const bool first = m == u;
    members.push_back({flat(m.getParam()), flat(m.getGrad()), flat(m.getMomentumBuffer()), flat(m.getLr()),
                       first ? Flatten(host, loc, lowering.result(0)) : flat(m.getNewParam()),
                       first ? Flatten(host, loc, lowering.result(1)) : flat(m.getNewMomentumBuffer())});
  }
  auto type = llvm::cast<mlir::ShapedType>(u.getGrad().getType());
  const int64_t R = type.getDimSize(0), S = type.getDimSize(1), n_elems = R * S;
  const bool tall = R > S;
  const int64_t r = tall ? S : R, n = tall ? R : S;  // X is [r, n], r <= n
  const int64_t count = static_cast<int64_t>(members.size()), parts = GridFor(n_elems);
  constexpr double a = 3.4445, b = -4.7750, c = 2.0315;
  auto scratch = [&](int64_t size, mlir::Type t) { return lowering.Scratch(mlir::MemRefType::get({size}, t)); };
  // Each matrix's part of a group scratch starts aligned (an OpenCL sub-buffer must): the
  // per-matrix buffers are padded to kPartAlignment; X's parts are the batched products'
  // matrices, back to back, so a group needs r n 4 bytes to be a multiple (EmitMuon).
  auto padded = [](int64_t bytes) { return CeilDiv(bytes, kPartAlignment) * kPartAlignment; };
  const int64_t nesterov_stride = padded(n_elems * 4), partial_stride = padded(parts * 8),
                inv_stride = kPartAlignment;
  Value nesterov = scratch(count * nesterov_stride / 4, f32), partial = scratch(count * partial_stride / 8, f64);
  Value inv = scratch(count * inv_stride / 8, f64);
  const bool bf16 = UnderBf16Autocast(u);
  // Under bf16 the iterates X, A and B are bf16 values (each rounded as it is stored, as
  // nanochat's bf16 Newton-Schulz): bf16 buffers, so the products read bf16 operands.
  mlir::Type ns = bf16 ? host.getI16Type() : f32;
  const int64_t ns_bytes = bf16 ? 2 : 4;
  Value x = scratch(count * r * n, ns), x_next = scratch(count * r * n, ns);
  Value A = scratch(count * r * r, ns), B = scratch(count * r * r, ns);
  auto round = [&](KernelBuilder& k, Value v) { return bf16 ? EmitRoundToBf16(k.b(), loc, v) : v; };
  // Matrix m's part of a group scratch, a buffer of its own to the kernels (one kernel serves
  // every matrix).
  auto part = [&](Value whole, int64_t offset, int64_t size, mlir::Type t) {
    return lowering.ScratchPart(whole, offset, mlir::MemRefType::get({size}, t));
  };
  for (int64_t m = 0; m < count; ++m) {
    Value nesterov_m = part(nesterov, m * nesterov_stride, n_elems, f32), inv_m = part(inv, m * inv_stride, 1, f64);
    Value x_m = part(x, m * r * n * ns_bytes, r * n, ns), partial_m = part(partial, m * partial_stride, parts, f64);
    EmitMomentum(lowering, members[m].g, members[m].buf, members[m].new_buf, nesterov_m, partial_m, n_elems,
                 u.getMomentum().convertToDouble(), bf16);
    EmitInverseNorm(lowering, partial_m, parts, inv_m);
    ElementwiseLaunch(host, loc, "muon_normalize", n_elems, [&](KernelBuilder& k, Value e) {
      Value i = k.Div(e, k.Index(S)), j = k.Rem(e, k.Index(S));  // G[i, j]
      Value to = tall ? k.Add(k.Mul(j, k.Index(n)), i) : e;
      Value scaled = k.FMul(k.FCast(k.Load(nesterov_m, {e}), f64), k.Load(inv_m, {k.Index(0)}));
      k.Store(round(k, k.FCast(scaled, f32)), x_m, {to});
    });
  }
  for (int step = 0; step < 5; ++step) {
    // A = X X^T; B = c (A A) + b A; X' = (B X) + a X: the CPU's Gemm calls and sums in f32
    // (under bf16, each result rounded as the epilogue stores it), every matrix of the group
    // in one batched product.
    GemmSpec gram{"muon_gram", r, r, n, {x, false}, {x, true}, A};
    GemmSpec poly{"muon_poly", r, r, r, {A, false}, {A, false}, B, c, b, A};
    GemmSpec apply{"muon_apply", r, n, r, {B, false}, {x, false}, x_next, 1.0, a, x};
    for (GemmSpec* spec : {&gram, &poly, &apply}) spec->batch = count;
    if (bf16) {
      for (auto [spec, out] : {std::pair{&gram, A}, std::pair{&poly, B}, std::pair{&apply, x_next}}) {
        spec->inputs_bf16 = true;
        spec->epilogue = [&, out = out](KernelBuilder& k, Value value, Value at, Value, Value) {
          k.Store(round(k, value), out, {at});
        };
      }
    }
    EmitGemm(lowering, gram, gemm);
    EmitGemm(lowering, poly, gemm);
    EmitGemm(lowering, apply, gemm);
    std::swap(x, x_next);
  }
  const double shape_scale = std::sqrt(std::max(1.0, double(R) / double(S)));
  for (int64_t m = 0; m < count; ++m) {
    const MuonMember& mm = members[m];
    Value x_m = part(x, m * r * n * ns_bytes, r * n, ns);
    ElementwiseLaunch(host, loc, "muon_update", n_elems, [&](KernelBuilder& k, Value e) {
      Value i = k.Div(e, k.Index(S)), j = k.Rem(e, k.Index(S));
      Value from = tall ? k.Add(k.Mul(j, k.Index(n)), i) : e;
      Value scale = k.FMul(k.FCast(k.Load(mm.lr, {k.Index(0)}), f64), k.Float(f64, shape_scale));
      Value updated = k.FSub(k.FCast(k.Load(mm.p, {e}), f64), k.FMul(scale, k.FCast(k.Load(x_m, {from}), f64)));
      k.Store(k.FCast(updated, f32), mm.new_p, {e});
    });
  }
  return mlir::success();
}

mlir::LogicalResult EmitMuon(lowering::OpLowering& lowering, gpt::MuonUpdateOp u, GemmBackend gemm) {
  if (!u.getNesterov() || u.getNsSteps() != 5) {
    return u.emitOpError("gpt-lower-to-gpu: the Muon kernels run Nesterov Muon with 5 Newton-Schulz steps (as the "
                         "interpreter), got nesterov=")
           << u.getNesterov() << ", ns_steps=" << u.getNsSteps();
  }
  // X's matrices are a batch back to back, each where a buffer argument may start: shapes
  // whose X is not a multiple of the alignment run alone.
  auto type = llvm::cast<mlir::ShapedType>(u.getGrad().getType());
  const bool fits = type.getNumElements() * (UnderBf16Autocast(u) ? 2 : 4) % kPartAlignment == 0;
  llvm::SmallVector<gpt::MuonUpdateOp> group = {u};
  if (fits) {
    group = lowering::MatchMuonGroup(
        u, [&](Value a, Value b) { return lowering::DisjointBytes(lowering, a, b); },
        [&](mlir::Operation* op) { return lowering.IsAbsorbed(op); });
  }
  for (gpt::MuonUpdateOp m : group) {
    if (m != u) lowering.Absorb(m);
  }
  return EmitMuonGroup(lowering, group, gemm);
}

}  // namespace

mlir::LogicalResult EmitOptimizer(lowering::OpLowering& lowering, const GpuLoweringOptions& options) {
  mlir::Operation* op = lowering.op();
  for (mlir::Type t : op->getOperandTypes()) {
    if (!llvm::cast<mlir::ShapedType>(t).getElementType().isF32()) {
      return op->emitOpError("gpt-lower-to-gpu: the optimizer kernels run f32 parameters, state and scalars only, got ")
             << t;
    }
  }
  if (auto u = llvm::dyn_cast<gpt::AdamwUpdateOp>(op)) return EmitAdamW(lowering, u);
  return EmitMuon(lowering, llvm::cast<gpt::MuonUpdateOp>(op), options.gemm);
}

}  // namespace gpt_sft::compiler::gpu_lowering
