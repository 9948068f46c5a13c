//===- planned_function.cc - a planned entry point into its launch schedule -===//
//
// This file implements LowerPlannedFunction:
//   1. make the schedule function beside the old one: the same arguments as memrefs, the
//      arena as a last argument `memref<?xi8>`, results as memrefs;
//   2. walk the old body in order: place each op's results (a view of the arena at the
//      planned offset, or the donated argument), lower placement-only ops here and hand
//      the others to the target's callback;
//   3. lay out the memory the lowerings asked for past the plan (persistent buffers, then
//      the scratch region), patch the offsets of their views, record the arena's size;
//   4. replace the old function by the new one.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/planned_function.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ir/fusion_label.h"
#include "ir/gpt_ops.h"
#include "compiler/transforms/bf16_storage.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace gpt_sft::compiler::lowering {

using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::MemRefType;
using ::mlir::success;
using ::mlir::Value;

namespace {

constexpr char kOffsetsAttr[] = "gpt.offsets";
constexpr char kDonatesAttr[] = "gpt.donates";

int64_t AlignUp(int64_t bytes, int64_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

int64_t BytesOf(MemRefType type) {
  const int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * std::max<int64_t>(1, bits / 8);
}

/// The memref a static tensor type becomes; null for anything else.
MemRefType BufferType(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape()) return {};
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// The buffer of an op result: BufferType, with i16 elements (bf16 bit patterns) for a value
/// gpt-mark-bf16-storage marked.
MemRefType ResultBufferType(Value result) {
  MemRefType type = BufferType(result.getType());
  if (!type || !StoredAsBf16(result)) return type;
  return MemRefType::get(type.getShape(), mlir::IntegerType::get(type.getContext(), 16));
}

/// Identity strides of a row-major shape.
llvm::SmallVector<int64_t> RowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// What profiles call op's launches: its name ("gpt.matmul"), or for a lowered fusion region
/// "fusion(<its ops>)" ("fusion(round_bf16,add)"; gpt-lower-fusions names them).
std::string LaunchLabel(mlir::Operation& op) {
  if (!llvm::isa<mlir::linalg::GenericOp>(op)) return op.getName().getStringRef().str();
  auto ops = op.getAttrOfType<mlir::StringAttr>(kFusionOpsAttr);
  return ops ? "fusion(" + ops.str() + ")" : "fusion";
}

}  // namespace

/// The driver behind LowerPlannedFunction; OpLowering forwards to it.
class PlannedFunctionLowering {
 public:
  PlannedFunctionLowering(mlir::func::FuncOp func, int64_t alignment)
      : old_(func), alignment_(alignment), builder_(func.getContext()) {}

  LogicalResult Run(const OpLoweringFn& lower_op);

  Value BufferOf(Value tensor);
  Value Scratch(MemRefType type);
  Value ScratchPart(Value scratch, int64_t byte_offset, MemRefType type);
  Value Persistent(MemRefType type, Value key);
  Value FindPersistent(Value key) { return persistent_by_key_.lookup(key); }
  std::optional<std::pair<int64_t, int64_t>> PlannedArenaBytes(Value tensor);
  void RequireArgumentRange(Value tensor, int64_t first, int64_t end);
  Value Constant(mlir::DenseElementsAttr value);
  void Absorb(mlir::Operation* op) { absorbed_.insert(op); }
  bool IsAbsorbed(mlir::Operation* op) const { return absorbed_.contains(op); }

 private:
  enum class Region { kPersistent, kScratch };
  struct PendingOffset {
    mlir::arith::ConstantIndexOp op;
    Region region;
    int64_t relative;
  };

  LogicalResult MakeFunction();
  /// The buffer of `op`'s result `r` from its placement attributes, created at the builder's
  /// insertion point.
  Value Place(mlir::Operation* op, unsigned r);
  Value ArenaView(int64_t offset, MemRefType type);
  Value PendingView(Region region, int64_t relative, MemRefType type);
  /// `buffer` seen with `type`'s shape (same bytes, same start).
  Value Reinterpret(Value buffer, MemRefType type);
  LogicalResult LowerReshape(mlir::Operation* op);
  LogicalResult LowerReturn(mlir::func::ReturnOp ret);
  /// Names the op a lowering's launches compute (gpt.op), on the ops after `before`.
  void TagLaunches(mlir::Block* block, mlir::Operation* before, llvm::StringRef op_name);
  LogicalResult Finish();

  mlir::func::FuncOp old_, new_;
  int64_t alignment_;
  mlir::OpBuilder builder_;
  Value arena_;
  int64_t planned_bytes_ = 0;
  int64_t persistent_bytes_ = 0;
  int64_t scratch_used_ = 0;  // by the op being lowered
  int64_t scratch_max_ = 0;
  std::vector<PendingOffset> pending_;
  llvm::DenseMap<Value, Value> buffers_;
  llvm::DenseMap<Value, Value> persistent_by_key_;
  llvm::DenseSet<mlir::Operation*> absorbed_;
  int next_constant_ = 0;
};

LogicalResult PlannedFunctionLowering::MakeFunction() {
  auto arena_bytes = old_->getAttrOfType<mlir::IntegerAttr>(kArenaBytesAttr);
  if (!arena_bytes) return old_.emitOpError("is not memory-planned (no gpt.arena_bytes): run gpt-plan-buffers first");
  planned_bytes_ = AlignUp(arena_bytes.getInt(), alignment_);
  if (!old_.getBody().hasOneBlock()) return old_.emitOpError("has more than one block");
  llvm::SmallVector<mlir::Type> inputs, results;
  for (mlir::Type t : old_.getFunctionType().getInputs()) {
    MemRefType m = BufferType(t);
    if (!m) return old_.emitOpError("has an argument of type ") << t << "; the schedule needs static tensors";
    inputs.push_back(m);
  }
  mlir::MLIRContext* ctx = old_.getContext();
  inputs.push_back(MemRefType::get({mlir::ShapedType::kDynamic}, builder_.getI8Type()));
  for (mlir::Type t : old_.getFunctionType().getResults()) {
    MemRefType m = BufferType(t);
    if (!m) return old_.emitOpError("has a result of type ") << t << "; the schedule needs static tensors";
    results.push_back(m);
  }
  builder_.setInsertionPoint(old_);
  new_ = builder_.create<mlir::func::FuncOp>(old_.getLoc(), (old_.getSymName() + "__schedule").str(),
                                             mlir::FunctionType::get(ctx, inputs, results));
  for (unsigned i = 0; i < old_.getNumArguments(); ++i) new_.setArgAttrs(i, old_.getArgAttrDict(i));
  new_.setArgAttr(old_.getNumArguments(), kArenaArgAttr, builder_.getUnitAttr());
  for (unsigned i = 0; i < old_.getNumResults(); ++i) new_.setResultAttrs(i, old_.getResultAttrDict(i));
  mlir::Block* block = new_.addEntryBlock();
  for (unsigned i = 0; i < old_.getNumArguments(); ++i) buffers_[old_.getArgument(i)] = block->getArgument(i);
  arena_ = block->getArgument(old_.getNumArguments());
  builder_.setInsertionPointToStart(block);
  return success();
}

Value PlannedFunctionLowering::ArenaView(int64_t offset, MemRefType type) {
  Value shift = builder_.create<mlir::arith::ConstantIndexOp>(old_.getLoc(), offset);
  return builder_.create<mlir::memref::ViewOp>(old_.getLoc(), type, arena_, shift, mlir::ValueRange{});
}

Value PlannedFunctionLowering::PendingView(Region region, int64_t relative, MemRefType type) {
  auto shift = builder_.create<mlir::arith::ConstantIndexOp>(old_.getLoc(), relative);
  pending_.push_back({shift, region, relative});
  return builder_.create<mlir::memref::ViewOp>(old_.getLoc(), type, arena_, shift.getResult(), mlir::ValueRange{});
}

Value PlannedFunctionLowering::Reinterpret(Value buffer, MemRefType type) {
  auto from = llvm::cast<MemRefType>(buffer.getType());
  if (from == type) return buffer;
  return builder_.create<mlir::memref::ReinterpretCastOp>(old_.getLoc(), type, buffer, /*offset=*/0, type.getShape(),
                                                           RowMajorStrides(type.getShape()));
}

Value PlannedFunctionLowering::Place(mlir::Operation* op, unsigned r) {
  Value result = op->getResult(r);
  if (Value known = buffers_.lookup(result)) return known;
  MemRefType type = ResultBufferType(result);
  auto offsets = op->getAttrOfType<mlir::DenseI64ArrayAttr>(kOffsetsAttr);
  auto donates = op->getAttrOfType<mlir::DenseI64ArrayAttr>(kDonatesAttr);
  if (!type || !offsets || offsets.size() != static_cast<int64_t>(op->getNumResults())) return {};
  Value buffer;
  if (donates && donates[r] >= 0) {
    buffer = Reinterpret(new_.getArgument(donates[r]), type);
  } else if (offsets[r] >= 0) {
    buffer = ArenaView(offsets[r], type);
  } else {
    return {};
  }
  buffers_[result] = buffer;
  return buffer;
}

Value PlannedFunctionLowering::BufferOf(Value tensor) {
  if (Value known = buffers_.lookup(tensor)) return known;
  mlir::Operation* def = tensor.getDefiningOp();
  if (def == nullptr) return {};
  return Place(def, llvm::cast<mlir::OpResult>(tensor).getResultNumber());
}

std::optional<std::pair<int64_t, int64_t>> PlannedFunctionLowering::PlannedArenaBytes(Value tensor) {
  Value buffer = BufferOf(tensor);
  if (!buffer) return std::nullopt;
  const int64_t bytes = BytesOf(llvm::cast<MemRefType>(buffer.getType()));
  while (auto cast = buffer.getDefiningOp<mlir::memref::ReinterpretCastOp>()) buffer = cast.getSource();
  auto view = buffer.getDefiningOp<mlir::memref::ViewOp>();
  if (!view || view.getSource() != arena_) return std::nullopt;
  auto shift = view.getByteShift().getDefiningOp<mlir::arith::ConstantIndexOp>();
  if (!shift) return std::nullopt;
  for (const PendingOffset& p : pending_) {
    if (p.op == shift) return std::nullopt;  // lowering memory, not the plan's
  }
  return std::make_pair(shift.value(), shift.value() + bytes);
}

void PlannedFunctionLowering::RequireArgumentRange(Value tensor, int64_t first, int64_t end) {
  while (auto r = tensor.getDefiningOp<gpt::ReshapeOp>()) tensor = r.getX();
  auto arg = llvm::dyn_cast<mlir::BlockArgument>(tensor);
  if (!arg || arg.getOwner()->getParentOp() != old_.getOperation()) return;
  if (auto known = new_.getArgAttrOfType<mlir::DenseI64ArrayAttr>(arg.getArgNumber(), kValidRangeAttr)) {
    first = std::max(first, known[0]);
    end = std::min(end, known[1]);
  }
  new_.setArgAttr(arg.getArgNumber(), kValidRangeAttr, builder_.getDenseI64ArrayAttr({first, end}));
}

Value PlannedFunctionLowering::Scratch(MemRefType type) {
  const int64_t relative = scratch_used_;
  scratch_used_ = AlignUp(scratch_used_ + BytesOf(type), alignment_);
  scratch_max_ = std::max(scratch_max_, scratch_used_);
  return PendingView(Region::kScratch, relative, type);
}

Value PlannedFunctionLowering::ScratchPart(Value scratch, int64_t byte_offset, MemRefType type) {
  auto view = scratch.getDefiningOp<mlir::memref::ViewOp>();
  auto shift = view ? view.getByteShift().getDefiningOp<mlir::arith::ConstantIndexOp>() : nullptr;
  for (const PendingOffset& p : pending_) {
    if (p.op != shift || p.region != Region::kScratch) continue;
    const int64_t whole = BytesOf(llvm::cast<MemRefType>(scratch.getType()));
    if (byte_offset < 0 || byte_offset + BytesOf(type) > whole) {
      llvm::report_fatal_error("ScratchPart: the part leaves its scratch (a lowering bug)");
    }
    return PendingView(p.region, p.relative + byte_offset, type);
  }
  llvm::report_fatal_error("ScratchPart: not a view that Scratch returned (a lowering bug)");
}

Value PlannedFunctionLowering::Persistent(MemRefType type, Value key) {
  const int64_t relative = persistent_bytes_;
  persistent_bytes_ = AlignUp(persistent_bytes_ + BytesOf(type), alignment_);
  Value view = PendingView(Region::kPersistent, relative, type);
  persistent_by_key_[key] = view;
  return view;
}

Value PlannedFunctionLowering::Constant(mlir::DenseElementsAttr value) {
  auto module = old_->getParentOfType<mlir::ModuleOp>();
  auto type = MemRefType::get(value.getType().getShape(), value.getType().getElementType());
  // One global per distinct constant (attributes are uniqued: equal values are one attribute),
  // so ops that ask for the same table (every rotary op of a model) share its bytes.
  for (auto global : module.getOps<mlir::memref::GlobalOp>()) {
    if (global.getConstant() && global.getType() == type && global.getInitialValueAttr() == value) {
      return builder_.create<mlir::memref::GetGlobalOp>(old_.getLoc(), type, global.getSymName());
    }
  }
  std::string name;
  mlir::SymbolTable symbols(module);
  do {
    name = "gpt_constant_" + std::to_string(next_constant_++);
  } while (symbols.lookup(name) != nullptr);
  mlir::OpBuilder module_builder = mlir::OpBuilder::atBlockBegin(module.getBody());
  module_builder.create<mlir::memref::GlobalOp>(old_.getLoc(), name, module_builder.getStringAttr("private"), type,
                                                value, /*constant=*/true, /*alignment=*/nullptr);
  return builder_.create<mlir::memref::GetGlobalOp>(old_.getLoc(), type, name);
}

LogicalResult PlannedFunctionLowering::LowerReshape(mlir::Operation* op) {
  Value from = BufferOf(op->getOperand(0));
  MemRefType type = ResultBufferType(op->getResult(0));
  if (!from || !type) return op->emitOpError("has an operand or result the schedule cannot place");
  // A view where the plan shares the bytes: the same offset (or the same donated argument).
  auto offsets = op->getAttrOfType<mlir::DenseI64ArrayAttr>(kOffsetsAttr);
  auto donates = op->getAttrOfType<mlir::DenseI64ArrayAttr>(kDonatesAttr);
  bool view = false;
  if (mlir::Operation* def = op->getOperand(0).getDefiningOp()) {
    auto def_offsets = def->getAttrOfType<mlir::DenseI64ArrayAttr>(kOffsetsAttr);
    auto def_donates = def->getAttrOfType<mlir::DenseI64ArrayAttr>(kDonatesAttr);
    const unsigned r = llvm::cast<mlir::OpResult>(op->getOperand(0)).getResultNumber();
    if (offsets && def_offsets) {
      const int64_t d = donates ? donates[0] : -1, dd = def_donates ? def_donates[r] : -1;
      view = d >= 0 ? d == dd : (dd < 0 && offsets[0] == def_offsets[r]);
    }
  }
  if (view) {
    buffers_[op->getResult(0)] = Reinterpret(from, type);
    return success();
  }
  Value to = Place(op, 0);
  if (!to) return op->emitOpError("has no placement (gpt.offsets): the function was not memory-planned");
  auto copy = builder_.create<mlir::memref::CopyOp>(op->getLoc(), Reinterpret(from, type), to);
  copy->setAttr(kOpNameAttr, builder_.getStringAttr(op->getName().getStringRef()));
  return success();
}

void PlannedFunctionLowering::TagLaunches(mlir::Block* block, mlir::Operation* before, llvm::StringRef op_name) {
  auto it = before == nullptr ? block->begin() : std::next(before->getIterator());
  for (; it != block->end(); ++it) {
    if (llvm::isa<mlir::memref::ViewOp, mlir::memref::ReinterpretCastOp, mlir::memref::GetGlobalOp,
                  mlir::arith::ConstantOp>(*it)) {
      continue;
    }
    if (!it->hasAttr(kOpNameAttr)) it->setAttr(kOpNameAttr, builder_.getStringAttr(op_name));
  }
}

LogicalResult PlannedFunctionLowering::LowerReturn(mlir::func::ReturnOp ret) {
  // The argument of each gpt.name: a result of that name is the argument's new value.
  llvm::StringMap<unsigned> argument_named;
  for (unsigned i = 0; i < old_.getNumArguments(); ++i) {
    if (auto name = old_.getArgAttrOfType<mlir::StringAttr>(i, "gpt.name")) argument_named[name.getValue()] = i;
  }
  llvm::SmallVector<Value> values;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value buffer = BufferOf(v);
    if (!buffer) return ret.emitOpError("returns a value the schedule cannot place");
    // Updated state always ends in its own slot: the runtime keeps the step's state there,
    // so a result the plan could not write in place is copied home.
    auto name = old_.getResultAttrOfType<mlir::StringAttr>(i, "gpt.name");
    if (auto it = name ? argument_named.find(name.getValue()) : argument_named.end(); it != argument_named.end()) {
      Value home = new_.getArgument(it->second);
      if (buffer != home) {
        auto copy = builder_.create<mlir::memref::CopyOp>(ret.getLoc(), buffer, home);
        copy->setAttr(kOpNameAttr, builder_.getStringAttr("state update"));
        buffer = home;
      }
    }
    values.push_back(buffer);
  }
  builder_.create<mlir::func::ReturnOp>(ret.getLoc(), values);
  return success();
}

LogicalResult PlannedFunctionLowering::Finish() {
  const int64_t persistent_base = planned_bytes_;
  const int64_t scratch_base = AlignUp(persistent_base + persistent_bytes_, alignment_);
  for (PendingOffset& p : pending_) {
    const int64_t base = p.region == Region::kPersistent ? persistent_base : scratch_base;
    p.op.setValueAttr(builder_.getIndexAttr(base + p.relative));
  }
  const int64_t total = scratch_base + scratch_max_;
  new_->setAttr(kArenaBytesAttr, builder_.getI64IntegerAttr(total == 0 ? 0 : total));
  const std::string name = old_.getSymName().str();
  old_.erase();
  new_.setSymName(name);
  return success();
}

LogicalResult PlannedFunctionLowering::Run(const OpLoweringFn& lower_op) {
  if (failed(MakeFunction())) return failure();
  for (mlir::Operation& op : old_.getBody().front()) {
    if (absorbed_.contains(&op) || llvm::isa<mlir::tensor::EmptyOp>(op)) continue;
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      if (failed(LowerReturn(ret))) return failure();
      continue;
    }
    if (auto constant = llvm::dyn_cast<mlir::arith::ConstantOp>(op)) {
      auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
      if (!dense || !BufferType(constant.getType())) return op.emitOpError("only dense tensor constants are lowered");
      buffers_[constant.getResult()] = Constant(dense);
      continue;
    }
    if (llvm::isa<gpt::ReshapeOp>(op)) {
      if (failed(LowerReshape(&op))) return failure();
      continue;
    }
    for (unsigned r = 0; r < op.getNumResults(); ++r) {
      if (!Place(&op, r)) {
        return op.emitOpError("result ") << r << " has no placement (gpt.offsets) or is not a static tensor";
      }
    }
    for (Value operand : op.getOperands()) {
      // A linalg.generic's `outs` placeholder holds no bytes: its result's place is the buffer.
      if (operand.getDefiningOp<mlir::tensor::EmptyOp>()) continue;
      if (!BufferOf(operand)) return op.emitOpError("has an operand the schedule cannot place");
    }
    scratch_used_ = 0;
    mlir::Block* block = builder_.getInsertionBlock();
    mlir::Operation* before = block->empty() ? nullptr : &block->back();
    OpLowering lowering(*this, &op, builder_);
    if (failed(lower_op(lowering))) return failure();
    TagLaunches(block, before, LaunchLabel(op));
  }
  return Finish();
}

Value OpLowering::operand(unsigned i) { return driver_.BufferOf(op_->getOperand(i)); }
Value OpLowering::result(unsigned i) { return driver_.BufferOf(op_->getResult(i)); }
Value OpLowering::BufferOf(Value tensor) { return driver_.BufferOf(tensor); }
Value OpLowering::Scratch(MemRefType type) { return driver_.Scratch(type); }
Value OpLowering::ScratchPart(Value scratch, int64_t byte_offset, MemRefType type) {
  return driver_.ScratchPart(scratch, byte_offset, type);
}
void OpLowering::RequireArgumentRange(Value tensor, int64_t first, int64_t end) {
  driver_.RequireArgumentRange(tensor, first, end);
}
std::optional<std::pair<int64_t, int64_t>> OpLowering::PlannedArenaBytes(Value tensor) {
  return driver_.PlannedArenaBytes(tensor);
}
Value OpLowering::Persistent(MemRefType type, Value key) { return driver_.Persistent(type, key); }
Value OpLowering::FindPersistent(Value key) { return driver_.FindPersistent(key); }
Value OpLowering::Constant(mlir::DenseElementsAttr value) { return driver_.Constant(value); }
void OpLowering::Absorb(mlir::Operation* later) { driver_.Absorb(later); }
bool OpLowering::IsAbsorbed(mlir::Operation* op) const { return driver_.IsAbsorbed(op); }

Value OpLowering::I64(int64_t value) {
  return builder_.create<mlir::arith::ConstantIntOp>(loc(), value, builder_.getI64Type());
}
Value OpLowering::F64(double value) {
  return builder_.create<mlir::arith::ConstantFloatOp>(loc(), llvm::APFloat(value), builder_.getF64Type());
}
Value OpLowering::F32(float value) {
  return builder_.create<mlir::arith::ConstantFloatOp>(loc(), llvm::APFloat(value), builder_.getF32Type());
}

LogicalResult LowerPlannedFunction(mlir::func::FuncOp func, int64_t alignment, const OpLoweringFn& lower_op) {
  PlannedFunctionLowering driver(func, alignment);
  return driver.Run(lower_op);
}

bool DisjointBytes(OpLowering& l, mlir::Value a, mlir::Value b) {
  const auto pa = l.PlannedArenaBytes(a), pb = l.PlannedArenaBytes(b);
  if (pa && pb) return pa->second <= pb->first || pb->second <= pa->first;
  return pa.has_value() != pb.has_value();
}

}  // namespace gpt_sft::compiler::lowering
