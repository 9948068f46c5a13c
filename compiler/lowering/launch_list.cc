//===- launch_list.cc - the launch schedule read into the artifact --------===//
//
// This file implements ExtractLaunchList:
//   1. lay every memref.global's contents into the constants blob (aligned);
//   2. for each schedule function: its arguments become slots (one per gpt.name over all
//      functions; a name seen twice must have one type), then each op of the body, in
//      order, becomes a launch whose memref operands are traced to (buffer, offset);
//   3. the returned memrefs become the results' places.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/launch_list.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/gpt_ops.h"
#include "compiler/lowering/planned_function.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace gpt_sft::compiler::lowering {
namespace {

using artifact::Arg;
using artifact::BufferRef;
using artifact::ElementType;
using artifact::Launch;
using artifact::LaunchKind;
using artifact::Scalar;
using mlir::Value;

constexpr int64_t kConstantAlignment = 256;

std::string Print(mlir::Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return os.str();
}

std::string Print(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return os.str();
}

absl::StatusOr<ElementType> ElementOf(mlir::Type type, const std::string& what) {
  if (type.isF32()) return ElementType::kF32;
  if (type.isF64()) return ElementType::kF64;
  // i16 buffers hold bf16 bit patterns (compiler/transforms/bf16_storage.h): nothing else is i16.
  if (type.isBF16() || type.isSignlessInteger(16)) return ElementType::kBF16;
  if (type.isSignlessInteger(32)) return ElementType::kI32;
  if (type.isSignlessInteger(64)) return ElementType::kI64;
  return absl::InvalidArgumentError(absl::StrCat(what, " has element type ", Print(type),
                                                 "; buffers hold f32, f64, bf16, i32 or i64"));
}

int64_t Bytes(mlir::MemRefType type) {
  return type.getNumElements() * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

/// The raw little-endian bytes of a dense constant, splats expanded.
std::string ConstantBytes(mlir::DenseElementsAttr attr) {
  llvm::ArrayRef<char> raw = attr.getRawData();
  if (!attr.isSplat()) return std::string(raw.data(), raw.size());
  std::string out;
  const int64_t n = attr.getNumElements();
  out.reserve(raw.size() * n);
  for (int64_t i = 0; i < n; ++i) out.append(raw.data(), raw.size());
  return out;
}

class Extractor {
 public:
  Extractor(mlir::ModuleOp module, const ModuleIndex& modules) : module_(module), modules_(modules) {}

  absl::StatusOr<artifact::Artifact> Run();

 private:
  absl::Status LayConstants();
  absl::Status ReadFunction(mlir::func::FuncOp func);
  absl::StatusOr<BufferRef> Trace(Value buffer, const std::string& what);
  absl::StatusOr<Arg> ArgOf(Value value, const std::string& what);
  absl::StatusOr<int64_t> IndexConstant(Value value, const std::string& what);
  absl::StatusOr<Launch> ReadLaunch(mlir::Operation& op, const std::string& where);

  mlir::ModuleOp module_;
  const ModuleIndex& modules_;
  artifact::Artifact artifact_;
  std::map<std::string, int64_t> constant_offsets_;
  // The function being read: its arguments' slots and its arena argument.
  std::vector<int> arg_slots_;
  Value arena_;
  mlir::func::FuncOp func_;
};

absl::Status Extractor::LayConstants() {
  for (auto global : module_.getOps<mlir::memref::GlobalOp>()) {
    auto value = llvm::dyn_cast_or_null<mlir::DenseElementsAttr>(global.getInitialValueAttr());
    if (!value) {
      return absl::InvalidArgumentError(absl::StrCat("memref.global @", global.getSymName().str(),
                                                     " has no dense initial value: only constants are laid out"));
    }
    std::string& blob = artifact_.constants;
    blob.resize((blob.size() + kConstantAlignment - 1) / kConstantAlignment * kConstantAlignment, '\0');
    constant_offsets_[global.getSymName().str()] = static_cast<int64_t>(blob.size());
    blob += ConstantBytes(value);
  }
  return absl::OkStatus();
}

absl::StatusOr<BufferRef> Extractor::Trace(Value buffer, const std::string& what) {
  auto type = llvm::dyn_cast<mlir::MemRefType>(buffer.getType());
  if (!type || !type.hasStaticShape()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not a memref of static shape"));
  }
  const int64_t bytes = Bytes(type);
  if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(buffer)) {
    if (arg.getOwner()->getParentOp() != func_.getOperation()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is a block argument of a nested region"));
    }
    return BufferRef{BufferRef::Space::kSlot, arg_slots_.at(arg.getArgNumber()), 0, bytes};
  }
  mlir::Operation* def = buffer.getDefiningOp();
  if (auto view = llvm::dyn_cast<mlir::memref::ViewOp>(def)) {
    if (view.getSource() != arena_) return absl::InvalidArgumentError(absl::StrCat(what, " views a buffer other than the arena"));
    absl::StatusOr<int64_t> shift = IndexConstant(view.getByteShift(), what + " (its arena offset)");
    if (!shift.ok()) return shift.status();
    return BufferRef{BufferRef::Space::kArena, -1, *shift, bytes};
  }
  if (auto cast = llvm::dyn_cast<mlir::memref::ReinterpretCastOp>(def)) {
    absl::StatusOr<BufferRef> source = Trace(cast.getSource(), what);
    if (!source.ok()) return source;
    if (cast.getStaticOffsets().size() != 1 || mlir::ShapedType::isDynamic(cast.getStaticOffsets()[0])) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is a reinterpret_cast with a dynamic offset"));
    }
    const int64_t element = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    return BufferRef{source->space, source->slot, source->offset + cast.getStaticOffsets()[0] * element, bytes};
  }
  if (auto get = llvm::dyn_cast<mlir::memref::GetGlobalOp>(def)) {
    auto it = constant_offsets_.find(get.getName().str());
    if (it == constant_offsets_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " reads @", get.getName().str(), ", which is no constant"));
    }
    return BufferRef{BufferRef::Space::kConstants, -1, it->second, bytes};
  }
  return absl::InvalidArgumentError(absl::StrCat(what, " is defined by ", def->getName().getStringRef().str(),
                                                 ", which the launch list cannot follow to an address"));
}

absl::StatusOr<int64_t> Extractor::IndexConstant(Value value, const std::string& what) {
  mlir::IntegerAttr attr;
  if (auto c = value.getDefiningOp<mlir::arith::ConstantOp>()) attr = llvm::dyn_cast<mlir::IntegerAttr>(c.getValue());
  if (!attr) return absl::InvalidArgumentError(absl::StrCat(what, " is not an integer constant"));
  return attr.getInt();
}

absl::StatusOr<Arg> Extractor::ArgOf(Value value, const std::string& what) {
  if (llvm::isa<mlir::MemRefType>(value.getType())) {
    absl::StatusOr<BufferRef> ref = Trace(value, what);
    if (!ref.ok()) return ref.status();
    return Arg::Buffer(*ref);
  }
  auto c = value.getDefiningOp<mlir::arith::ConstantOp>();
  if (!c) return absl::InvalidArgumentError(absl::StrCat(what, " is a scalar that is not an arith.constant"));
  mlir::Type t = value.getType();
  Scalar s;
  if (auto f = llvm::dyn_cast<mlir::FloatAttr>(c.getValue())) {
    if (!t.isF32() && !t.isF64()) return absl::InvalidArgumentError(absl::StrCat(what, " is a float scalar of type ", Print(t)));
    s.type = t.isF32() ? Scalar::Type::kF32 : Scalar::Type::kF64;
    s.f = f.getValueAsDouble();
    return Arg::Of(s);
  }
  if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(c.getValue())) {
    if (t.isSignlessInteger(32)) {
      s.type = Scalar::Type::kI32;
    } else if (t.isSignlessInteger(64) || t.isIndex()) {
      s.type = Scalar::Type::kI64;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(what, " is an integer scalar of type ", Print(t)));
    }
    s.i = i.getInt();
    return Arg::Of(s);
  }
  return absl::InvalidArgumentError(absl::StrCat(what, " is a constant of type ", Print(t)));
}

absl::StatusOr<Launch> Extractor::ReadLaunch(mlir::Operation& op, const std::string& where) {
  Launch launch;
  launch.where = where;
  auto add_args = [&](mlir::ValueRange values) -> absl::Status {
    for (auto [i, v] : llvm::enumerate(values)) {
      absl::StatusOr<Arg> arg = ArgOf(v, absl::StrCat(where, ": argument ", i));
      if (!arg.ok()) return arg.status();
      launch.args.push_back(*arg);
    }
    return absl::OkStatus();
  };
  if (auto l = llvm::dyn_cast<mlir::gpu::LaunchFuncOp>(op)) {
    launch.kind = LaunchKind::kKernel;
    auto it = modules_.gpu_modules.find(l.getKernelModuleName().str());
    if (it == modules_.gpu_modules.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": gpu.module @", l.getKernelModuleName().str(), " has no artifact module"));
    }
    launch.module = it->second;
    launch.name = l.getKernelName().str();
    const Value grid[3] = {l.getGridSizeX(), l.getGridSizeY(), l.getGridSizeZ()};
    const Value block[3] = {l.getBlockSizeX(), l.getBlockSizeY(), l.getBlockSizeZ()};
    for (int d = 0; d < 3; ++d) {
      absl::StatusOr<int64_t> g = IndexConstant(grid[d], where + ": the grid size");
      absl::StatusOr<int64_t> b = IndexConstant(block[d], where + ": the block size");
      if (!g.ok()) return g.status();
      if (!b.ok()) return b.status();
      launch.grid[d] = *g;
      launch.block[d] = *b;
    }
    if (Value wg = l.getDynamicSharedMemorySize()) {
      absl::StatusOr<int64_t> bytes = IndexConstant(wg, where + ": the workgroup memory size");
      if (!bytes.ok()) return bytes.status();
      launch.workgroup_bytes = *bytes;
    }
    if (absl::Status s = add_args(l.getKernelOperands()); !s.ok()) return s;
    return launch;
  }
  if (auto h = llvm::dyn_cast<gpt::LaunchHostKernelOp>(op)) {
    if (modules_.host_module < 0) return absl::InvalidArgumentError(where + ": the artifact has no host module");
    launch.kind = LaunchKind::kKernel;
    launch.module = modules_.host_module;
    launch.name = h.getKernel().str();
    launch.grid = {static_cast<int64_t>(h.getElements()), 1, 1};
    if (absl::Status s = add_args(h.getBuffers()); !s.ok()) return s;
    return launch;
  }
  if (auto b = llvm::dyn_cast<gpt::CallBuiltinOp>(op)) {
    launch.kind = LaunchKind::kBuiltin;
    launch.name = b.getBuiltin().str();
    if (absl::Status s = add_args(b.getArgs()); !s.ok()) return s;
    return launch;
  }
  if (auto c = llvm::dyn_cast<mlir::memref::CopyOp>(op)) {
    launch.kind = LaunchKind::kCopy;
    launch.name = "copy";
    if (absl::Status s = add_args({c.getSource(), c.getTarget()}); !s.ok()) return s;
    return launch;
  }
  if (auto c = llvm::dyn_cast<gpt::CollectiveOp>(op)) {
    launch.kind = LaunchKind::kCollective;
    launch.name = c.getKind().str();
    launch.reduction = gpt::stringifyReductionKind(c.getReduction()).str();
    absl::StatusOr<ElementType> type =
        ElementOf(llvm::cast<mlir::MemRefType>(c.getBuffer().getType()).getElementType(), where);
    if (!type.ok()) return type.status();
    launch.element_type = *type;
    if (absl::Status s = add_args(c.getBuffer()); !s.ok()) return s;
    return launch;
  }
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", op.getName().getStringRef().str(),
                                                 " is not a launch the runtime runs"));
}

absl::Status Extractor::ReadFunction(mlir::func::FuncOp func) {
  func_ = func;
  artifact::Function f;
  f.name = func.getSymName().str();
  const std::string fn = "@" + f.name;
  auto arena_bytes = func->getAttrOfType<mlir::IntegerAttr>(kArenaBytesAttr);
  if (!arena_bytes) return absl::InvalidArgumentError(fn + " has no gpt.arena_bytes");
  f.arena_bytes = arena_bytes.getInt();
  arg_slots_.assign(func.getNumArguments(), -1);
  arena_ = {};
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (func.getArgAttr(i, kArenaArgAttr)) {
      arena_ = func.getArgument(i);
      continue;
    }
    auto type = llvm::dyn_cast<mlir::MemRefType>(func.getArgument(i).getType());
    auto name = func.getArgAttrOfType<mlir::StringAttr>(i, "gpt.name");
    const std::string what = absl::StrCat(fn, " argument ", i);
    if (!type || !type.hasStaticShape()) return absl::InvalidArgumentError(what + " is not a memref of static shape");
    if (!name) return absl::InvalidArgumentError(what + " has no gpt.name: slots are bound by name");
    absl::StatusOr<ElementType> element = ElementOf(type.getElementType(), what);
    if (!element.ok()) return element.status();
    artifact::TensorSpec spec{name.str(), *element, {type.getShape().begin(), type.getShape().end()}, std::nullopt};
    if (auto range = func.getArgAttrOfType<mlir::DenseI64ArrayAttr>(i, kValidRangeAttr); range && range.size() == 2) {
      spec.valid_range = std::make_pair(range[0], range[1]);
    }
    int slot = artifact_.FindSlot(spec.name);
    if (slot < 0) {
      slot = static_cast<int>(artifact_.slots.size());
      artifact_.slots.push_back(spec);
    } else {
      artifact::TensorSpec& known = artifact_.slots[slot];
      if (known.type != spec.type || known.shape != spec.shape) {
        return absl::InvalidArgumentError(absl::StrCat(what, " '", spec.name, "' has type ", Print(type),
                                                       " but another entry point has it as ",
                                                       artifact::ElementTypeName(known.type)));
      }
      if (spec.valid_range) known.valid_range = spec.valid_range;
    }
    arg_slots_[i] = slot;
    f.argument_slots.push_back(slot);
  }
  if (!arena_) return absl::InvalidArgumentError(fn + " has no arena argument (gpt.arena)");
  for (mlir::Operation& op : func.getBody().front()) {
    if (llvm::isa<mlir::memref::ViewOp, mlir::memref::ReinterpretCastOp, mlir::memref::GetGlobalOp,
                  mlir::arith::ConstantOp>(op)) {
      continue;
    }
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        const std::string what = absl::StrCat(fn, " result ", i);
        absl::StatusOr<BufferRef> ref = Trace(v, what);
        if (!ref.ok()) return ref.status();
        auto type = llvm::cast<mlir::MemRefType>(v.getType());
        absl::StatusOr<ElementType> element = ElementOf(type.getElementType(), what);
        if (!element.ok()) return element.status();
        std::string name;
        if (auto n = func.getResultAttrOfType<mlir::StringAttr>(i, "gpt.name")) name = n.str();
        f.results.push_back({name, *element, {type.getShape().begin(), type.getShape().end()}, std::nullopt});
        f.result_refs.push_back(*ref);
      }
      continue;
    }
    std::string op_name = op.getName().getStringRef().str();
    if (auto tag = op.getAttrOfType<mlir::StringAttr>(kOpNameAttr)) op_name = tag.str();
    const std::string where = absl::StrCat(op_name, " at ", Print(op.getLoc()));
    absl::StatusOr<Launch> launch = ReadLaunch(op, where);
    if (!launch.ok()) return launch.status();
    launch->op = op_name;
    f.launches.push_back(*std::move(launch));
  }
  artifact_.functions.push_back(std::move(f));
  return absl::OkStatus();
}

absl::StatusOr<artifact::Artifact> Extractor::Run() {
  if (absl::Status s = LayConstants(); !s.ok()) return s;
  for (auto func : module_.getOps<mlir::func::FuncOp>()) {
    if (func.isDeclaration()) continue;
    bool has_arena = false;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) has_arena |= func.getArgAttr(i, kArenaArgAttr) != nullptr;
    if (!has_arena) continue;
    if (absl::Status s = ReadFunction(func); !s.ok()) return s;
  }
  return artifact_;
}

}  // namespace

absl::StatusOr<artifact::Artifact> ExtractLaunchList(mlir::ModuleOp module, const ModuleIndex& modules) {
  Extractor extractor(module, modules);
  return extractor.Run();
}

}  // namespace gpt_sft::compiler::lowering
