//===- kernel_builder.cc - writing gpu.launch bodies in C++ ---------------===//
//
// This file implements KernelBuilder's helpers (thin wrappers over arith, math, memref,
// scf and gpu ops), the workgroup tree reduction, and EmitLaunch.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/kernel_builder.h"

#include "compiler/lowering/planned_function.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace gpt_sft::compiler::gpu_lowering {

using ::mlir::Value;
namespace arith = ::mlir::arith;

KernelBuilder::KernelBuilder(mlir::OpBuilder& builder, mlir::Location loc, mlir::gpu::LaunchOp launch, Dims grid,
                             Dims block)
    : b_(loc, builder), grid_(grid), block_(block) {
  const mlir::gpu::KernelDim3 blocks = launch.getBlockIds(), threads = launch.getThreadIds();
  block_ids_ = {blocks.x, blocks.y, blocks.z};
  thread_ids_ = {threads.x, threads.y, threads.z};
}

Value KernelBuilder::LocalLinearId() {
  Value id = thread_ids_[0];
  if (block_[1] > 1) id = Add(id, Mul(thread_ids_[1], Index(block_[0])));
  if (block_[2] > 1) id = Add(id, Mul(thread_ids_[2], Index(block_[0] * block_[1])));
  return id;
}

Value KernelBuilder::GlobalId() { return Add(Mul(block_ids_[0], Index(block_[0])), thread_ids_[0]); }

Value KernelBuilder::Index(int64_t v) { return b_.create<arith::ConstantIndexOp>(v); }
Value KernelBuilder::F32(double v) { return Float(b_.getF32Type(), v); }
Value KernelBuilder::I32(int32_t v) { return b_.create<arith::ConstantIntOp>(v, b_.getI32Type()); }
Value KernelBuilder::Float(mlir::Type type, double v) {
  return b_.create<arith::ConstantOp>(type, b_.getFloatAttr(type, v));
}

Value KernelBuilder::Add(Value a, Value b) { return b_.create<arith::AddIOp>(a, b); }
Value KernelBuilder::Sub(Value a, Value b) { return b_.create<arith::SubIOp>(a, b); }
Value KernelBuilder::Mul(Value a, Value b) { return b_.create<arith::MulIOp>(a, b); }
Value KernelBuilder::Div(Value a, Value b) { return b_.create<arith::DivUIOp>(a, b); }
Value KernelBuilder::Rem(Value a, Value b) { return b_.create<arith::RemUIOp>(a, b); }
Value KernelBuilder::Min(Value a, Value b) { return b_.create<arith::MinUIOp>(a, b); }
Value KernelBuilder::Lt(Value a, Value b) { return b_.create<arith::CmpIOp>(arith::CmpIPredicate::ult, a, b); }
Value KernelBuilder::Le(Value a, Value b) { return b_.create<arith::CmpIOp>(arith::CmpIPredicate::ule, a, b); }
Value KernelBuilder::Eq(Value a, Value b) { return b_.create<arith::CmpIOp>(arith::CmpIPredicate::eq, a, b); }
Value KernelBuilder::And(Value a, Value b) { return b_.create<arith::AndIOp>(a, b); }
Value KernelBuilder::IndexFromI32(Value v) { return b_.create<arith::IndexCastOp>(b_.getIndexType(), v); }
Value KernelBuilder::I32FromIndex(Value v) { return b_.create<arith::IndexCastOp>(b_.getI32Type(), v); }

Value KernelBuilder::FAdd(Value a, Value b) { return b_.create<arith::AddFOp>(a, b); }
Value KernelBuilder::FSub(Value a, Value b) { return b_.create<arith::SubFOp>(a, b); }
Value KernelBuilder::FMul(Value a, Value b) { return b_.create<arith::MulFOp>(a, b); }
Value KernelBuilder::FDiv(Value a, Value b) { return b_.create<arith::DivFOp>(a, b); }
Value KernelBuilder::FMax(Value a, Value b) { return b_.create<arith::MaximumFOp>(a, b); }
Value KernelBuilder::FMin(Value a, Value b) { return b_.create<arith::MinimumFOp>(a, b); }
Value KernelBuilder::FNeg(Value a) { return b_.create<arith::NegFOp>(a); }
Value KernelBuilder::Fma(Value a, Value b, Value c) { return b_.create<mlir::math::FmaOp>(a, b, c); }
Value KernelBuilder::Exp(Value a) { return b_.create<mlir::math::ExpOp>(a); }
Value KernelBuilder::Log(Value a) { return b_.create<mlir::math::LogOp>(a); }
Value KernelBuilder::Sqrt(Value a) { return b_.create<mlir::math::SqrtOp>(a); }
Value KernelBuilder::Rsqrt(Value a) { return b_.create<mlir::math::RsqrtOp>(a); }
Value KernelBuilder::Tanh(Value a) { return b_.create<mlir::math::TanhOp>(a); }
Value KernelBuilder::Select(Value cond, Value a, Value b) { return b_.create<arith::SelectOp>(cond, a, b); }
Value KernelBuilder::FLt(Value a, Value b) { return b_.create<arith::CmpFOp>(arith::CmpFPredicate::OLT, a, b); }
Value KernelBuilder::FGt(Value a, Value b) { return b_.create<arith::CmpFOp>(arith::CmpFPredicate::OGT, a, b); }

Value KernelBuilder::FCast(Value v, mlir::Type to) {
  const unsigned from_bits = v.getType().getIntOrFloatBitWidth(), to_bits = to.getIntOrFloatBitWidth();
  if (v.getType() == to) return v;
  if (from_bits < to_bits) return b_.create<arith::ExtFOp>(to, v);
  return b_.create<arith::TruncFOp>(to, v);
}

Value KernelBuilder::IntToFloat(Value v, mlir::Type to) { return b_.create<arith::SIToFPOp>(to, v); }

Value KernelBuilder::PrivateArray(int64_t n, mlir::Type type) {
  auto space = mlir::gpu::AddressSpaceAttr::get(b_.getContext(), mlir::gpu::AddressSpace::Private);
  return b_.create<mlir::memref::AllocaOp>(mlir::MemRefType::get({n}, type, mlir::MemRefLayoutAttrInterface{}, space));
}

Value KernelBuilder::Load(Value memref, mlir::ValueRange indices) {
  Value v = b_.create<mlir::memref::LoadOp>(memref, indices);
  return IsBf16Storage(memref.getType()) ? WidenBf16(b_, b_.getLoc(), v) : v;
}
void KernelBuilder::Store(Value value, Value memref, mlir::ValueRange indices) {
  if (IsBf16Storage(memref.getType())) value = NarrowToBf16(b_, b_.getLoc(), FCast(value, b_.getF32Type()));
  b_.create<mlir::memref::StoreOp>(value, memref, indices);
}
void KernelBuilder::Barrier() { b_.create<mlir::gpu::BarrierOp>(); }

void KernelBuilder::For(Value lo, Value hi, Value step, llvm::function_ref<void(Value)> body) {
  auto loop = b_.create<mlir::scf::ForOp>(lo, hi, step);
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

void KernelBuilder::For(int64_t lo, int64_t hi, int64_t step, llvm::function_ref<void(Value)> body) {
  For(Index(lo), Index(hi), Index(step), body);
}

llvm::SmallVector<Value> KernelBuilder::For(
    Value lo, Value hi, Value step, mlir::ValueRange init,
    llvm::function_ref<llvm::SmallVector<Value>(Value, mlir::ValueRange)> body) {
  auto loop = b_.create<mlir::scf::ForOp>(lo, hi, step, init);
  {
    mlir::OpBuilder::InsertionGuard guard(b_);
    mlir::Block* block = loop.getBody();
    if (!block->empty()) block->getTerminator()->erase();
    b_.setInsertionPointToEnd(block);
    llvm::SmallVector<Value> next = body(loop.getInductionVar(), loop.getRegionIterArgs());
    b_.create<mlir::scf::YieldOp>(next);
  }
  return llvm::SmallVector<Value>(loop.getResults());
}

void KernelBuilder::If(Value cond, llvm::function_ref<void()> then) {
  auto op = b_.create<mlir::scf::IfOp>(cond, /*withElseRegion=*/false);
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(op.thenBlock()->getTerminator());
  then();
}

llvm::SmallVector<Value> KernelBuilder::IfElse(Value cond, mlir::TypeRange types,
                                               llvm::function_ref<llvm::SmallVector<Value>()> then,
                                               llvm::function_ref<llvm::SmallVector<Value>()> otherwise) {
  auto op = b_.create<mlir::scf::IfOp>(types, cond, /*withElseRegion=*/true);
  {
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToEnd(op.thenBlock());
    b_.create<mlir::scf::YieldOp>(then());
    b_.setInsertionPointToEnd(op.elseBlock());
    b_.create<mlir::scf::YieldOp>(otherwise());
  }
  return llvm::SmallVector<Value>(op.getResults());
}

Value KernelBuilder::WorkgroupReduce(Value value, Value scratch, Reduction kind) {
  return TreeReduce(value, scratch, kind, threads(), LocalLinearId(), /*first=*/Value());
}

Value KernelBuilder::ReduceAlongX(Value value, Value scratch, Reduction kind) {
  if (block_[1] * block_[2] == 1) return WorkgroupReduce(value, scratch, kind);
  Value lid = LocalLinearId();
  return TreeReduce(value, scratch, kind, block_[0], thread_ids_[0], Sub(lid, thread_ids_[0]));
}

Value KernelBuilder::TreeReduce(Value value, Value scratch, Reduction kind, int64_t lanes, Value lane, Value first) {
  // Tree reduction in workgroup memory: fold the upper half onto the lower half until one
  // element is left. A non-power-of-two count first folds its excess onto the front.
  int64_t p = 1;
  while (p * 2 <= lanes) p *= 2;
  auto combine = [&](Value a, Value b) { return kind == Reduction::kSum ? FAdd(a, b) : FMax(a, b); };
  Value slot = first ? Add(first, lane) : lane;
  auto fold = [&](int64_t distance) {
    Value other = Load(scratch, {Add(slot, Index(distance))});
    Store(combine(Load(scratch, {slot}), other), scratch, {slot});
  };
  Barrier();  // earlier readers of `scratch` are done
  Store(value, scratch, {slot});
  Barrier();
  if (p < lanes) {
    If(Lt(lane, Index(lanes - p)), [&] { fold(p); });
    Barrier();
  }
  for (int64_t half = p / 2; half >= 1; half /= 2) {
    If(Lt(lane, Index(half)), [&] { fold(half); });
    Barrier();
  }
  return Load(scratch, {first ? first : Index(0)});
}

mlir::MemRefType WorkgroupMemRef(mlir::MLIRContext* context, llvm::ArrayRef<int64_t> shape, mlir::Type element) {
  auto space = mlir::gpu::AddressSpaceAttr::get(context, mlir::gpu::AddressSpace::Workgroup);
  return mlir::MemRefType::get(shape, element, mlir::MemRefLayoutAttrInterface{}, space);
}

mlir::gpu::LaunchOp EmitLaunch(mlir::OpBuilder& host, mlir::Location loc, llvm::StringRef name, Dims grid, Dims block,
                               llvm::ArrayRef<mlir::MemRefType> workgroup,
                               llvm::function_ref<void(KernelBuilder&, mlir::ValueRange)> body) {
  auto index = [&](int64_t v) -> Value { return host.create<arith::ConstantIndexOp>(loc, v); };
  llvm::SmallVector<mlir::Type> wg_types(workgroup.begin(), workgroup.end());
  auto launch = host.create<mlir::gpu::LaunchOp>(loc, index(grid[0]), index(grid[1]), index(grid[2]), index(block[0]),
                                                 index(block[1]), index(block[2]), /*dynamicSharedMemorySize=*/nullptr,
                                                 /*asyncTokenType=*/nullptr, /*asyncDependencies=*/mlir::ValueRange{},
                                                 wg_types, /*privateAttributions=*/mlir::TypeRange{});
  launch->setAttr(lowering::OpLowering::kKernelNameAttr, host.getStringAttr(name));
  mlir::OpBuilder inner(host.getContext());
  mlir::Block& entry = launch.getBody().front();
  inner.setInsertionPointToEnd(&entry);
  KernelBuilder k(inner, loc, launch, grid, block);
  body(k, launch.getWorkgroupAttributions());
  inner.setInsertionPointToEnd(&entry);
  inner.create<mlir::gpu::TerminatorOp>(loc);
  return launch;
}

bool IsBf16Storage(mlir::Type type) {
  if (auto shaped = llvm::dyn_cast<mlir::ShapedType>(type)) type = shaped.getElementType();
  return type.isSignlessInteger(16);
}

// Integer ops only: SPIR-V's Kernel dialect has no bf16 type, and the bit pattern is the value.
Value WidenBf16(mlir::OpBuilder& b, mlir::Location loc, Value bits) {
  Value wide = b.create<arith::ExtUIOp>(loc, b.getI32Type(), bits);
  Value high = b.create<arith::ShLIOp>(loc, wide, b.create<arith::ConstantIntOp>(loc, 16, 32));
  return b.create<arith::BitcastOp>(loc, b.getF32Type(), high);
}

Value NarrowToBf16(mlir::OpBuilder& b, mlir::Location loc, Value value) {
  Value bits = b.create<arith::BitcastOp>(loc, b.getI32Type(), value);
  Value high = b.create<arith::ShRUIOp>(loc, bits, b.create<arith::ConstantIntOp>(loc, 16, 32));
  return b.create<arith::TruncIOp>(loc, b.getI16Type(), high);
}

Value Flatten(mlir::OpBuilder& host, mlir::Location loc, Value buffer) {
  auto type = llvm::cast<mlir::MemRefType>(buffer.getType());
  if (type.getRank() == 1) return buffer;
  auto flat = mlir::MemRefType::get({type.getNumElements()}, type.getElementType());
  return host.create<mlir::memref::ReinterpretCastOp>(loc, flat, buffer, /*offset=*/0,
                                                      llvm::ArrayRef<int64_t>{type.getNumElements()},
                                                      llvm::ArrayRef<int64_t>{1});
}

}  // namespace gpt_sft::compiler::gpu_lowering
