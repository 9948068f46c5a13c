//===- matmul_kernels.cc - GPU kernels for gpt.matmul and its weight gradient -===//
//
// This file implements EmitMatmul with the tiled gemm (gemm.h), one launch per op:
//   gpt.matmul              y[M, N] = x[M, K] w[N, K]^T   (leading dims of x flattened to M)
//   gpt.matmul_weight_grad  dw[N, K] = dy[M, N]^T x[M, K]  (summed over every leading dim)
// The input gradient needs no kernel of its own: autodiff writes it as
// `gpt.matmul(dy, gpt.transpose(w, [1, 0]))`, and the gemm reads w [K', N'] untransposed
// instead of the transpose's result (matmul_fusion.h; the transpose emits nothing).
// The elementwise op consuming the result (residual add, softcap, a lowered fusion, the
// gradient accumulation into its donated argument) is computed in the epilogue from the
// accumulator and absorbed; the result itself is stored only when something else reads it.
//
//===----------------------------------------------------------------------===//

#include "ir/autocast.h"
#include "ir/gpt_ops.h"
#include "compiler/lowering/gpu/gemm.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "compiler/lowering/gpu/matmul_fusion.h"
#include "compiler/transforms/elementwise_scalar.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::Value;

int64_t LastDim(Value memref) {
  auto type = llvm::cast<mlir::MemRefType>(memref.getType());
  return type.getDimSize(type.getRank() - 1);
}

int64_t Rows(Value memref) { return llvm::cast<mlir::MemRefType>(memref.getType()).getNumElements() / LastDim(memref); }

/// The gemm of gpt.matmul: A = x [M, K]; B = w [N, K] transposed, or the [K, N] weight a
/// folded transpose reads.
GemmSpec MatmulSpec(lowering::OpLowering& lowering, gpt::MatmulOp m) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  Value x = lowering.BufferOf(m.getX());
  GemmSpec spec;
  spec.name = "matmul";
  spec.M = Rows(x);
  spec.K = LastDim(x);
  spec.a = {Flatten(host, loc, x), /*transposed=*/false};
  auto t = m.getW().getDefiningOp<gpt::TransposeOp>();
  if (t && FoldsIntoMatmul(t)) {
    Value w = lowering.BufferOf(t.getX());  // [K, N]
    spec.N = LastDim(w);
    spec.b = {Flatten(host, loc, w), /*transposed=*/false};
  } else {
    Value w = lowering.BufferOf(m.getW());  // [N, K]
    spec.N = Rows(w);
    spec.b = {Flatten(host, loc, w), /*transposed=*/true};
  }
  return spec;
}

/// The gemm of gpt.matmul_weight_grad: A = dy [M', N] transposed, B = x [M', K], summed over
/// the M' tokens.
GemmSpec WeightGradSpec(lowering::OpLowering& lowering, gpt::MatmulWeightGradOp g) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  Value dy = lowering.BufferOf(g.getDy()), x = lowering.BufferOf(g.getX());
  GemmSpec spec;
  spec.name = "matmul_weight_grad";
  spec.M = LastDim(dy);  // dw's rows: dy's columns
  spec.N = LastDim(x);
  spec.K = Rows(x);      // summed over every token
  spec.a = {Flatten(host, loc, dy), /*transposed=*/true};
  spec.b = {Flatten(host, loc, x), /*transposed=*/false};
  return spec;
}

/// An epilogue computing `z` (AbsorbableConsumer) element by element: the matmul's value for
/// its operand `r`, its other operands loaded at the same flat index; also stores the matmul
/// result into `c` when `c` is given. Host-side buffers are made here, before the launch.
GemmEpilogue ConsumerEpilogue(lowering::OpLowering& lowering, mlir::Operation* z, Value r, Value c) {
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  auto generic = llvm::dyn_cast<mlir::linalg::GenericOp>(z);
  llvm::SmallVector<Value> inputs = generic ? llvm::SmallVector<Value>(generic.getDpsInputs())
                                            : llvm::SmallVector<Value>(z->getOperands());
  llvm::SmallVector<Value> in_buffers, out_buffers;
  for (Value in : inputs) in_buffers.push_back(in == r ? Value() : Flatten(host, loc, lowering.BufferOf(in)));
  for (Value out : z->getResults()) out_buffers.push_back(Flatten(host, loc, lowering.BufferOf(out)));
  return [=](KernelBuilder& k, Value value, Value at, Value, Value) mutable {
    if (c) k.Store(value, c, {at});
    llvm::SmallVector<Value> scalars;
    for (Value buffer : in_buffers) scalars.push_back(buffer ? k.Load(buffer, {at}) : value);
    llvm::SmallVector<Value> results;
    if (generic) {
      mlir::Block& body = generic.getRegion().front();
      mlir::IRMapping map;
      for (unsigned i = 0; i < scalars.size(); ++i) map.map(body.getArgument(i), scalars[i]);
      for (mlir::Operation& op : body.without_terminator()) k.b().clone(op, map);
      for (Value v : body.getTerminator()->getOperands()) results.push_back(map.lookupOrDefault(v));
    } else {
      // AbsorbableConsumer only returns ops EmitElementwiseScalar knows.
      results.push_back(*EmitElementwiseScalar(k.b(), k.b().getLoc(), z, scalars));
    }
    for (unsigned i = 0; i < results.size(); ++i) k.Store(results[i], out_buffers[i], {at});
  };
}

/// "matmul" + "_add" / "_softcap" / "_fusion": the kernel's name with what it absorbed.
std::string FusedName(const std::string& base, mlir::Operation* z) {
  return base + "_" + (llvm::isa<mlir::linalg::GenericOp>(z) ? "fusion" : z->getName().stripDialect().str());
}

}  // namespace

mlir::LogicalResult EmitMatmul(lowering::OpLowering& lowering, const GpuLoweringOptions& options) {
  mlir::Operation* op = lowering.op();
  llvm::SmallVector<mlir::Type> types(op->getOperandTypes());
  types.push_back(op->getResult(0).getType());
  for (mlir::Type t : types) {
    if (!llvm::cast<mlir::ShapedType>(t).getElementType().isF32()) {
      return op->emitOpError("gpt-lower-to-gpu: the matmul kernels run f32 only, got ") << t;
    }
  }
  mlir::OpBuilder& host = lowering.builder();
  mlir::Location loc = lowering.loc();
  GemmSpec spec = llvm::isa<gpt::MatmulOp>(op) ? MatmulSpec(lowering, llvm::cast<gpt::MatmulOp>(op))
                                               : WeightGradSpec(lowering, llvm::cast<gpt::MatmulWeightGradOp>(op));
  spec.inputs_bf16 = UnderBf16Autocast(op);
  Value r = op->getResult(0);
  mlir::Operation* z = AbsorbableConsumer(lowering);
  const bool stores_r = z && llvm::any_of(r.getUsers(), [&](mlir::Operation* u) { return u != z; });
  auto add = llvm::dyn_cast_or_null<gpt::AddOp>(z);
  if (add && !stores_r && llvm::count(add->getOperands(), r) == 1) {
    // z = acc + r (the gradient accumulation): the gemm's own beta 1 with acc as c_in, so the
    // vendor gemm accumulates in place rather than a separate add kernel reading the product.
    Value acc = add.getLhs() == r ? add.getRhs() : add.getLhs();
    spec.c = Flatten(host, loc, lowering.BufferOf(add.getResult()));
    spec.c_in = Flatten(host, loc, lowering.BufferOf(acc));
    spec.beta = 1.0;
    spec.name = FusedName(spec.name, add);
    lowering.Absorb(add);
  } else if (z) {
    Value c = stores_r ? Flatten(host, loc, lowering.result(0)) : Value();
    spec.epilogue = ConsumerEpilogue(lowering, z, r, c);
    spec.name = FusedName(spec.name, z);
    lowering.Absorb(z);
  } else {
    spec.c = Flatten(host, loc, lowering.result(0));
  }
  EmitGemm(lowering, spec, options.gemm);
  return mlir::success();
}

}  // namespace gpt_sft::compiler::gpu_lowering
