//===- elementwise_kernels.cc - fusions and unfused elementwise ops on GPUs -===//
//
// This file implements EmitElementwise. An elementwise op (a fusion region lowered to a
// linalg.generic by gpt-lower-fusions, or a single gpt.add/mul/relu_square/softcap and
// their gradients) becomes one linalg.generic over the flattened buffers, memref form,
// tagged with its workgroup size. The pass then tiles it with the transform dialect: one
// workgroup per tile, one work-item per element (gpu_tiling.cc), so the kernel itself is
// the linalg body as scalar code.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "compiler/transforms/elementwise_scalar.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::success;
using ::mlir::Value;

constexpr int64_t kMaxBlock = 256;

/// The largest divisor of `n` not above kMaxBlock: workgroups tile the elements exactly, so
/// the tiled loops have static trip counts (the transform dialect's mapping needs them).
int64_t BlockFor(int64_t n) {
  for (int64_t b = std::min(n, kMaxBlock); b > 1; --b) {
    if (n % b == 0) return b;
  }
  return 1;
}

/// The 1-D generic over `ins` -> `outs` (flattened buffers of one element count) whose body
/// `scalar` fills from the input scalars.
LogicalResult MakeGeneric(lowering::OpLowering& lowering, llvm::StringRef name, llvm::ArrayRef<Value> ins,
                          llvm::ArrayRef<Value> outs,
                          llvm::function_ref<mlir::FailureOr<llvm::SmallVector<Value>>(mlir::OpBuilder&, mlir::Location,
                                                                                     mlir::ValueRange)>
                              scalar) {
  mlir::OpBuilder& b = lowering.builder();
  mlir::Location loc = lowering.loc();
  llvm::SmallVector<Value> flat_ins, flat_outs;
  for (Value v : ins) flat_ins.push_back(Flatten(b, loc, v));
  for (Value v : outs) flat_outs.push_back(Flatten(b, loc, v));
  const int64_t n = llvm::cast<mlir::MemRefType>(flat_outs[0].getType()).getNumElements();
  llvm::SmallVector<mlir::AffineMap> maps(ins.size() + outs.size(), b.getMultiDimIdentityMap(1));
  bool ok = true;
  auto generic = b.create<mlir::linalg::GenericOp>(
      loc, flat_ins, flat_outs, maps, llvm::ArrayRef<mlir::utils::IteratorType>{mlir::utils::IteratorType::parallel},
      [&](mlir::OpBuilder& nested, mlir::Location nested_loc, mlir::ValueRange args) {
        // The bf16 seam (kernel_builder.h), as the kernels' Load and Store have it.
        llvm::SmallVector<Value> in_scalars;
        for (Value arg : args.take_front(ins.size())) {
          in_scalars.push_back(IsBf16Storage(arg.getType()) ? WidenBf16(nested, nested_loc, arg) : arg);
        }
        mlir::FailureOr<llvm::SmallVector<Value>> values = scalar(nested, nested_loc, in_scalars);
        if (failed(values)) {
          ok = false;
          values = llvm::SmallVector<Value>(args.take_back(outs.size()));  // keeps the body well formed
        } else {
          for (auto [value, out] : llvm::zip(*values, args.take_back(outs.size()))) {
            if (IsBf16Storage(out.getType())) value = NarrowToBf16(nested, nested_loc, value);
          }
        }
        nested.create<mlir::linalg::YieldOp>(nested_loc, *values);
      });
  generic->setAttr(lowering::OpLowering::kKernelNameAttr, b.getStringAttr(name));
  generic->setAttr(kElementwiseBlockAttr, b.getI64IntegerAttr(BlockFor(n)));
  return ok ? success() : failure();
}

/// A fusion: the tensor generic's body, cloned into the memref generic.
LogicalResult EmitFusion(lowering::OpLowering& lowering, mlir::linalg::GenericOp fusion) {
  for (mlir::AffineMap map : fusion.getIndexingMapsArray()) {
    if (!map.isIdentity()) return fusion.emitOpError("gpt-lower-to-gpu: only elementwise (identity-map) generics lower");
  }
  llvm::SmallVector<Value> ins, outs;
  for (Value in : fusion.getDpsInputs()) ins.push_back(lowering.BufferOf(in));
  for (unsigned i = 0; i < fusion.getNumResults(); ++i) outs.push_back(lowering.result(i));
  mlir::Block& body = fusion.getRegion().front();
  return MakeGeneric(lowering, "fusion", ins, outs,
                     [&](mlir::OpBuilder& b, mlir::Location, mlir::ValueRange scalars)
                         -> mlir::FailureOr<llvm::SmallVector<Value>> {
                       mlir::IRMapping map;
                       for (unsigned i = 0; i < scalars.size(); ++i) map.map(body.getArgument(i), scalars[i]);
                       for (mlir::Operation& op : body.without_terminator()) b.clone(op, map);
                       llvm::SmallVector<Value> yielded;
                       for (Value v : body.getTerminator()->getOperands()) yielded.push_back(map.lookupOrDefault(v));
                       return yielded;
                     });
}

}  // namespace

LogicalResult EmitElementwise(lowering::OpLowering& lowering) {
  mlir::Operation* op = lowering.op();
  if (auto fusion = llvm::dyn_cast<mlir::linalg::GenericOp>(op)) return EmitFusion(lowering, fusion);
  llvm::SmallVector<Value> ins;
  for (unsigned i = 0; i < op->getNumOperands(); ++i) ins.push_back(lowering.operand(i));
  // "gpt.relu_square_grad" -> "relu_square_grad".
  const llvm::StringRef name = op->getName().stripDialect();
  return MakeGeneric(lowering, name, ins, {lowering.result(0)},
                     [&](mlir::OpBuilder& b, mlir::Location loc, mlir::ValueRange scalars)
                         -> mlir::FailureOr<llvm::SmallVector<Value>> {
                       mlir::FailureOr<Value> v =
                           EmitElementwiseScalar(b, loc, op, llvm::SmallVector<Value>(scalars.begin(), scalars.end()));
                       if (failed(v)) {
                         op->emitOpError("gpt-lower-to-gpu: no elementwise lowering");
                         return failure();
                       }
                       return llvm::SmallVector<Value>{*v};
                     });
}

}  // namespace gpt_sft::compiler::gpu_lowering
