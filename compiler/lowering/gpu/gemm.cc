//===- gemm.cc - the GPU matmuls' gemm: the tiled kernel or the vendor builtin -===//
//
// This file implements EmitGemm. The vendor route is a gpt.call_builtin "gemm.f32" (or
// "gemm_batched.f32") and, where the spec has an epilogue, an elementwise launch over the
// product. The tiled kernel (a batch's matrix z in workgroups (.., .., z)):
//   1. workgroup (bx, by) owns C[64 by, 64 bx] .. +64; work-item t computes rows
//      4 (t / 16) + i and columns 4 (t % 16) + j, i, j < 4;
//   2. for each K slice of 16: every work-item loads 4 elements of the A slice and 4 of the
//      B slice into workgroup memory (As[k][m], Bs[k][n]), along the operand's contiguous dim;
//      loads past an edge read a clamped address and are masked to 0;
//   3. after a barrier, 16 steps of 4 x 4 fused multiply-adds from workgroup memory;
//   4. the epilogue writes alpha acc (+ beta C_in), or hands it to the spec's epilogue,
//      where the element exists.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/gemm.h"

#include "ir/gpt_ops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;

constexpr int64_t kTileM = 64, kTileN = 64, kTileK = 16, kThreads = 256, kPerThread = 4;
constexpr int64_t kThreadsPerRow = kTileN / kPerThread;  // 16

/// `buffer`[index] where `valid`, else 0; the load itself never leaves the buffer.
Value MaskedLoad(KernelBuilder& k, Value buffer, Value index, Value valid) {
  Value safe = k.Select(valid, index, k.Index(0));
  Value v = k.Load(buffer, {safe});
  return k.Select(valid, v, k.F32(0.0));
}

/// Stages the slice [k0, k0 + 16) x [outer0, outer0 + 64) of a gemm operand into
/// tile[kk * 64 + o], o along the operand's `outer` dim (M for A, N for B). The operand is
/// stored [outer, K] when `k_contiguous` (A as is, B transposed), else [K, outer]; each
/// work-item loads along the contiguous dim so that neighbours read neighbouring floats.
void StageSlice(KernelBuilder& k, Value buffer, Value base, bool k_contiguous, int64_t outer, int64_t K, Value tile,
                Value outer0, Value k0, Value lid) {
  static_assert(kTileM == kTileN, "A and B slices are staged alike");
  for (int64_t l = 0; l < kTileM * kTileK / kThreads; ++l) {
    Value e = k.Add(lid, k.Index(l * kThreads));
    Value o, kk;
    if (k_contiguous) {
      kk = k.Rem(e, k.Index(kTileK));
      o = k.Div(e, k.Index(kTileK));
    } else {
      o = k.Rem(e, k.Index(kTileM));
      kk = k.Div(e, k.Index(kTileM));
    }
    Value at_outer = k.Add(outer0, o), depth = k.Add(k0, kk);
    Value valid = k.And(k.Lt(at_outer, k.Index(outer)), k.Lt(depth, k.Index(K)));
    Value index = k_contiguous ? k.Add(k.Mul(at_outer, k.Index(K)), depth) : k.Add(k.Mul(depth, k.Index(outer)), at_outer);
    k.Store(MaskedLoad(k, buffer, k.Add(base, index), valid), tile, {k.Add(k.Mul(kk, k.Index(kTileM)), o)});
  }
}

/// The tiled kernel (this file's header comment).
void EmitTiledGemm(mlir::OpBuilder& host, mlir::Location loc, const GemmSpec& s) {
  mlir::MLIRContext* ctx = host.getContext();
  mlir::Type f32 = host.getF32Type();
  const Dims grid = {CeilDiv(s.N, kTileN), CeilDiv(s.M, kTileM), s.batch};
  EmitLaunch(host, loc, s.name, grid, {kThreads, 1, 1},
             {WorkgroupMemRef(ctx, {kTileK * kTileM}, f32), WorkgroupMemRef(ctx, {kTileK * kTileN}, f32)},
             [&](KernelBuilder& k, mlir::ValueRange wg) {
               Value as = wg[0], bs = wg[1];
               Value lid = k.ThreadId(0);
               Value tx = k.Rem(lid, k.Index(kThreadsPerRow)), ty = k.Div(lid, k.Index(kThreadsPerRow));
               Value row0 = k.Mul(k.BlockId(1), k.Index(kTileM)), col0 = k.Mul(k.BlockId(0), k.Index(kTileN));
               // Matrix z of a batch: every buffer's z-th matrix (0 when batch is 1).
               Value z = s.batch > 1 ? k.BlockId(2) : k.Index(0);
               Value a_base = k.Mul(z, k.Index(s.M * s.K)), b_base = k.Mul(z, k.Index(s.K * s.N)),
                     c_base = k.Mul(z, k.Index(s.M * s.N));
               Value ty4 = k.Mul(ty, k.Index(kPerThread)), tx4 = k.Mul(tx, k.Index(kPerThread));
               llvm::SmallVector<Value> zeros(kPerThread * kPerThread, k.F32(0.0));
               llvm::SmallVector<Value> acc = k.For(
                   k.Index(0), k.Index(s.K), k.Index(kTileK), zeros, [&](Value k0, mlir::ValueRange carried) {
                     k.Barrier();  // the previous slice's readers are done
                     StageSlice(k, s.a.buffer, a_base, !s.a.transposed, s.M, s.K, as, row0, k0, lid);
                     StageSlice(k, s.b.buffer, b_base, s.b.transposed, s.N, s.K, bs, col0, k0, lid);
                     k.Barrier();
                     llvm::SmallVector<Value> sums(carried.begin(), carried.end());
                     for (int64_t kk = 0; kk < kTileK; ++kk) {
                       Value a[kPerThread], b[kPerThread];
                       for (int64_t i = 0; i < kPerThread; ++i) {
                         a[i] = k.Load(as, {k.Add(k.Index(kk * kTileM + i), ty4)});
                         b[i] = k.Load(bs, {k.Add(k.Index(kk * kTileN + i), tx4)});
                       }
                       for (int64_t i = 0; i < kPerThread; ++i) {
                         for (int64_t j = 0; j < kPerThread; ++j) {
                           Value& sum = sums[i * kPerThread + j];
                           sum = k.b().create<mlir::math::FmaOp>(a[i], b[j], sum);
                         }
                       }
                     }
                     return sums;
                   });
               for (int64_t i = 0; i < kPerThread; ++i) {
                 for (int64_t j = 0; j < kPerThread; ++j) {
                   Value row = k.Add(row0, k.Add(ty4, k.Index(i))), col = k.Add(col0, k.Add(tx4, k.Index(j)));
                   k.If(k.And(k.Lt(row, k.Index(s.M)), k.Lt(col, k.Index(s.N))), [&] {
                     Value at = k.Add(c_base, k.Add(k.Mul(row, k.Index(s.N)), col));
                     Value v = acc[i * kPerThread + j];
                     if (s.alpha != 1.0) v = k.FMul(k.F32(s.alpha), v);
                     if (s.beta == 1.0) v = k.FAdd(v, k.Load(s.c_in, {at}));
                     else if (s.beta != 0.0) v = k.FAdd(v, k.FMul(k.F32(s.beta), k.Load(s.c_in, {at})));
                     if (s.epilogue) {
                       s.epilogue(k, v, at, row, col);
                     } else {
                       k.Store(v, s.c, {at});
                     }
                   });
                 }
               }
             });
}

/// `buffer` as f32 for gemm.f32, whose operands are f32 (GEMM_BUILTIN.md): a bf16-storage
/// buffer is widened into op-private scratch by a generated kernel, others are returned as is.
Value F32Operand(lowering::OpLowering& lowering, Value buffer, const std::string& name) {
  if (!buffer || !IsBf16Storage(buffer.getType())) return buffer;
  mlir::OpBuilder& host = lowering.builder();
  const int64_t n = llvm::cast<mlir::MemRefType>(buffer.getType()).getNumElements();
  Value wide = lowering.Scratch(mlir::MemRefType::get({n}, host.getF32Type()));
  constexpr int64_t kBlock = 256;
  EmitLaunch(host, lowering.loc(), name, {CeilDiv(n, kBlock), 1, 1}, {kBlock, 1, 1}, {},
             [&](KernelBuilder& k, mlir::ValueRange) {
               Value at = k.GlobalId();
               k.If(k.Lt(at, k.Index(n)), [&] { k.Store(k.Load(buffer, {at}), wide, {at}); });
             });
  return wide;
}

/// The vendor gemm as a builtin call into `product`, then the epilogue (if any) over it.
void EmitVendorGemm(lowering::OpLowering& lowering, const GemmSpec& spec) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  const int64_t elements = spec.batch * spec.M * spec.N;
  GemmSpec s = spec;
  // Both operands in bf16 buffers: gemm.bf16 reads them as they are (bf16 tensor cores on cuda).
  // Otherwise the f32 builtin, a bf16 operand widened for it.
  const bool bf16_operands = IsBf16Storage(s.a.buffer.getType()) && IsBf16Storage(s.b.buffer.getType());
  if (!bf16_operands) {
    s.a.buffer = F32Operand(lowering, s.a.buffer, s.name + "_widen_a");
    s.b.buffer = F32Operand(lowering, s.b.buffer, s.name + "_widen_b");
  }
  if (s.beta != 0.0 && IsBf16Storage(s.c_in.getType()) && s.epilogue) {
    // A bf16 c_in the epilogue adds (alpha A B, then + beta c_in, as the tiled kernel sums)
    // instead of a widened copy for the builtin.
    const double beta = s.beta;
    Value c_in = s.c_in;
    GemmEpilogue inner = s.epilogue;
    s.beta = 0.0;
    s.c_in = Value();
    s.epilogue = [=](KernelBuilder& k, Value value, Value at, Value row, Value col) {
      Value term = k.Load(c_in, {at});
      if (beta != 1.0) term = k.FMul(k.F32(beta), term);
      inner(k, k.FAdd(value, term), at, row, col);
    };
  }
  if (s.beta != 0.0) s.c_in = F32Operand(lowering, s.c_in, s.name + "_widen_c");
  if (s.c && IsBf16Storage(s.c.getType()) && !s.epilogue) {
    // A bf16 result: the product in f32 scratch, stored into c through the seam.
    Value c = s.c;
    s.c = Value();
    s.epilogue = [c](KernelBuilder& k, Value value, Value at, Value, Value) { k.Store(value, c, {at}); };
  }
  Value product = s.c && !IsBf16Storage(s.c.getType()) ? s.c
                                                        : lowering.Scratch(mlir::MemRefType::get({elements}, host.getF32Type()));
  llvm::SmallVector<Value> args;
  if (s.batch > 1) args.push_back(lowering.I64(s.batch));
  args.append({lowering.I64(s.M), lowering.I64(s.N), lowering.I64(s.K), lowering.I64(s.a.transposed ? 1 : 0),
               lowering.I64(s.b.transposed ? 1 : 0), lowering.I64(s.inputs_bf16 ? 1 : 0), lowering.F64(s.alpha),
               lowering.F64(s.beta)});
  args.append({s.a.buffer, s.b.buffer, s.beta != 0.0 ? s.c_in : product, product});
  const char* builtin = bf16_operands ? (s.batch > 1 ? "gemm_batched.bf16" : "gemm.bf16")
                                      : (s.batch > 1 ? "gemm_batched.f32" : "gemm.f32");
  host.create<gpt::CallBuiltinOp>(loc, host.getStringAttr(builtin), args);
  if (!s.epilogue) return;
  constexpr int64_t kBlock = 256;
  EmitLaunch(host, loc, s.name + "_epilogue", {CeilDiv(elements, kBlock), 1, 1}, {kBlock, 1, 1}, {},
             [&](KernelBuilder& k, mlir::ValueRange) {
               Value at = k.GlobalId();
               k.If(k.Lt(at, k.Index(elements)), [&] {
                 Value in_matrix = k.Rem(at, k.Index(s.M * s.N));
                 s.epilogue(k, k.Load(product, {at}), at, k.Div(in_matrix, k.Index(s.N)), k.Rem(in_matrix, k.Index(s.N)));
               });
             });
}

}  // namespace

void EmitGemm(lowering::OpLowering& lowering, const GemmSpec& spec, GemmBackend backend) {
  if (backend == GemmBackend::kVendorBuiltin) {
    EmitVendorGemm(lowering, spec);
  } else {
    EmitTiledGemm(lowering.builder(), lowering.loc(), spec);
  }
}

}  // namespace gpt_sft::compiler::gpu_lowering
