//===- gpu_to_spirv_pass.cc - gpt-gpu-to-spirv ----------------------------===//
//
// This file implements the pass. For every gpu.module:
//   1. clone it to the start of its own body (the original keeps what gpu.launch_func
//      refers to), and give the clone the OpenCL target environment;
//   2. in the clone, each kernel's workgroup attributions become memref.alloc in
//      workgroup memory at its entry (lowered to module-scope Workgroup variables), and its
//      known workgroup size becomes the SPIR-V entry point's (reqd_work_group_size);
//      loop-carried values go through variables (CarryLoopValuesThroughVariables says why);
//   3. map the gpu dialect's memory spaces to SPIR-V storage classes (none and global:
//      CrossWorkgroup, workgroup: Workgroup, private: Function);
//   4. convert the clone with the gpu, scf, arith, math, memref and func patterns into a
//      spirv.module, then lower its ABI attributes and deduce its version/capabilities.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/spirv/gpu_to_spirv_pass.h"

#include "mlir/Conversion/ArithToSPIRV/ArithToSPIRV.h"
#include "mlir/Conversion/ControlFlowToSPIRV/ControlFlowToSPIRV.h"
#include "mlir/Conversion/FuncToSPIRV/FuncToSPIRV.h"
#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRV.h"
#include "mlir/Conversion/MemRefToSPIRV/MemRefToSPIRV.h"
#include "mlir/Conversion/SCFToSPIRV/SCFToSPIRV.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"

namespace gpt_sft::compiler {
namespace {

namespace spirv = ::mlir::spirv;
using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::success;

spirv::TargetEnvAttr OpenClTargetEnv(mlir::MLIRContext* ctx) {
  using C = spirv::Capability;
  auto triple = spirv::VerCapExtAttr::get(spirv::Version::V_1_0,
                                          {C::Kernel, C::Addresses, C::Int16, C::Int64, C::Float64, C::Linkage}, {}, ctx);
  return spirv::TargetEnvAttr::get(triple, spirv::getDefaultResourceLimits(ctx), spirv::ClientAPI::OpenCL,
                                   spirv::Vendor::Unknown, spirv::DeviceType::Unknown,
                                   spirv::TargetEnvAttr::kUnknownDeviceID);
}

std::optional<spirv::StorageClass> StorageClassOf(mlir::Attribute space) {
  if (!space) return spirv::StorageClass::CrossWorkgroup;
  if (auto gpu = llvm::dyn_cast<mlir::gpu::AddressSpaceAttr>(space)) {
    switch (gpu.getValue()) {
      case mlir::gpu::AddressSpace::Global: return spirv::StorageClass::CrossWorkgroup;
      case mlir::gpu::AddressSpace::Workgroup: return spirv::StorageClass::Workgroup;
      case mlir::gpu::AddressSpace::Private: return spirv::StorageClass::Function;
    }
  }
  // Already a storage class, or a numeric space: MLIR's OpenCL rule.
  return spirv::mapMemorySpaceToOpenCLStorageClass(space);
}

/// MLIR 19's scf.for -> SPIR-V lowering carries a loop's results through a variable it
/// writes only in the loop body: a loop that runs zero times yields garbage instead of its
/// initial values (a work-item whose first index is past the end, as in every strided row
/// loop). So, before converting, each loop-carried value goes through a Function-storage
/// variable of our own: stored with the initial value before the loop, loaded at the top
/// of the body, stored by the yield, loaded after the loop.
void CarryLoopValuesThroughVariables(mlir::gpu::GPUFuncOp fn) {
  llvm::SmallVector<mlir::scf::ForOp> loops;
  fn.walk([&](mlir::scf::ForOp loop) {
    if (loop.getNumRegionIterArgs() > 0) loops.push_back(loop);
  });
  auto space = mlir::gpu::AddressSpaceAttr::get(fn.getContext(), mlir::gpu::AddressSpace::Private);
  for (mlir::scf::ForOp loop : loops) {  // innermost first: walk is post-order
    mlir::OpBuilder b(loop);
    mlir::Location loc = loop.getLoc();
    mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
    // SPIR-V has no index-typed memory: index values are kept as i64.
    auto stored_type = [&](mlir::Type t) -> mlir::Type { return t.isIndex() ? b.getI64Type() : t; };
    auto store = [&](mlir::OpBuilder& at, mlir::Value v, mlir::Value var) {
      if (v.getType().isIndex()) v = at.create<mlir::arith::IndexCastOp>(loc, at.getI64Type(), v);
      at.create<mlir::memref::StoreOp>(loc, v, var, mlir::ValueRange{zero});
    };
    auto load = [&](mlir::OpBuilder& at, mlir::Value var, mlir::Type t) -> mlir::Value {
      mlir::Value v = at.create<mlir::memref::LoadOp>(loc, var, mlir::ValueRange{zero});
      return t.isIndex() ? at.create<mlir::arith::IndexCastOp>(loc, t, v).getResult() : v;
    };
    llvm::SmallVector<mlir::Value> vars;
    for (mlir::Value init : loop.getInitArgs()) {
      auto type = mlir::MemRefType::get({1}, stored_type(init.getType()), mlir::MemRefLayoutAttrInterface{}, space);
      mlir::Value var = b.create<mlir::memref::AllocaOp>(loc, type);
      store(b, init, var);
      vars.push_back(var);
    }
    auto plain = b.create<mlir::scf::ForOp>(loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
    mlir::Block* body = plain.getBody();
    mlir::OpBuilder inner = mlir::OpBuilder::atBlockBegin(body);
    mlir::IRMapping map;
    map.map(loop.getInductionVar(), plain.getInductionVar());
    for (auto [arg, var] : llvm::zip(loop.getRegionIterArgs(), vars)) map.map(arg, load(inner, var, arg.getType()));
    inner.setInsertionPoint(body->getTerminator());
    for (mlir::Operation& op : loop.getBody()->without_terminator()) inner.clone(op, map);
    auto yield = llvm::cast<mlir::scf::YieldOp>(loop.getBody()->getTerminator());
    for (auto [value, var] : llvm::zip(yield.getOperands(), vars)) store(inner, map.lookupOrDefault(value), var);
    b.setInsertionPointAfter(plain);
    for (auto [result, var] : llvm::zip(loop.getResults(), vars)) result.replaceAllUsesWith(load(b, var, result.getType()));
    loop.erase();
  }
}

/// Step 2 for one kernel.
void PrepareKernel(mlir::gpu::GPUFuncOp fn) {
  mlir::Block& entry = fn.getBody().front();
  mlir::OpBuilder b = mlir::OpBuilder::atBlockBegin(&entry);
  const unsigned first = fn.getFirstWorkgroupAttributionIndex(), count = fn.getNumWorkgroupAttributions();
  for (mlir::BlockArgument arg : fn.getWorkgroupAttributions()) {
    auto alloc = b.create<mlir::memref::AllocOp>(fn.getLoc(), llvm::cast<mlir::MemRefType>(arg.getType()));
    arg.replaceAllUsesWith(alloc.getResult());
  }
  if (count > 0) {
    entry.eraseArguments(first, count);
    fn->setAttr(mlir::gpu::GPUFuncOp::getNumWorkgroupAttributionsAttrName(), b.getI64IntegerAttr(0));
  }
  if (auto block = fn.getKnownBlockSizeAttr()) {
    llvm::SmallVector<int32_t> size(block.asArrayRef().begin(), block.asArrayRef().end());
    fn->setAttr(spirv::getEntryPointABIAttrName(), spirv::getEntryPointABIAttr(fn.getContext(), size));
  } else {
    fn->setAttr(spirv::getEntryPointABIAttrName(), spirv::getEntryPointABIAttr(fn.getContext(), {}));
  }
}

LogicalResult ConvertClone(mlir::gpu::GPUModuleOp clone) {
  mlir::MLIRContext* ctx = clone.getContext();
  clone.walk([](mlir::gpu::GPUFuncOp fn) {
    if (!fn.isKernel()) return;
    PrepareKernel(fn);
    CarryLoopValuesThroughVariables(fn);
  });
  // Step 3.
  spirv::MemorySpaceToStorageClassConverter spaces(StorageClassOf);
  spirv::convertMemRefTypesAndAttrs(clone, spaces);
  // Step 4.
  spirv::TargetEnvAttr env = spirv::lookupTargetEnvOrDefault(clone);
  std::unique_ptr<mlir::ConversionTarget> target = mlir::SPIRVConversionTarget::get(env);
  mlir::SPIRVConversionOptions options;
  options.use64bitIndex = true;
  mlir::SPIRVTypeConverter types(env, options);
  mlir::RewritePatternSet patterns(ctx);
  mlir::populateGPUToSPIRVPatterns(types, patterns);
  mlir::ScfToSPIRVContext scf;
  mlir::populateSCFToSPIRVPatterns(types, scf, patterns);
  mlir::cf::populateControlFlowToSPIRVPatterns(types, patterns);
  mlir::arith::populateArithToSPIRVPatterns(types, patterns);
  mlir::populateMathToSPIRVPatterns(types, patterns);
  mlir::populateMemRefToSPIRVPatterns(types, patterns);
  mlir::populateFuncToSPIRVPatterns(types, patterns);
  return mlir::applyFullConversion(clone, *target, std::move(patterns));
}

class GpuToSpirvPass : public mlir::PassWrapper<GpuToSpirvPass, mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GpuToSpirvPass)

  llvm::StringRef getArgument() const final { return "gpt-gpu-to-spirv"; }
  llvm::StringRef getDescription() const final {
    return "Give every gpu.module an OpenCL-flavoured spirv.module twin (math, memory spaces, workgroup memory)";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<spirv::SPIRVDialect, mlir::memref::MemRefDialect>();
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    llvm::SmallVector<mlir::gpu::GPUModuleOp> originals(module.getOps<mlir::gpu::GPUModuleOp>());
    for (mlir::gpu::GPUModuleOp original : originals) {
      mlir::OpBuilder b = mlir::OpBuilder::atBlockBegin(original.getBody());
      auto clone = llvm::cast<mlir::gpu::GPUModuleOp>(b.clone(*original));
      clone->setAttr(spirv::getTargetEnvAttrName(), OpenClTargetEnv(&getContext()));
      // The twin holds no twins of its own.
      for (auto nested : llvm::make_early_inc_range(clone.getOps<spirv::ModuleOp>())) nested.erase();
      if (failed(ConvertClone(clone))) {
        original.emitError("gpt-gpu-to-spirv: the kernels do not convert to SPIR-V");
        return signalPassFailure();
      }
    }
    mlir::OpPassManager pm(mlir::ModuleOp::getOperationName());
    mlir::OpPassManager& gpu = pm.nest<mlir::gpu::GPUModuleOp>();
    mlir::OpPassManager& spv = gpu.nest<spirv::ModuleOp>();
    spv.addPass(spirv::createSPIRVLowerABIAttributesPass());
    spv.addPass(spirv::createSPIRVUpdateVCEPass());
    if (failed(runPipeline(pm, module))) return signalPassFailure();
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateGpuToSpirvPass() { return std::make_unique<GpuToSpirvPass>(); }

void RegisterGpuToSpirvPass() { mlir::PassRegistration<GpuToSpirvPass>(); }

}  // namespace gpt_sft::compiler
