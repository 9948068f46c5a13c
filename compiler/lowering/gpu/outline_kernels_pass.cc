//===- outline_kernels_pass.cc - gpt-outline-kernels ----------------------===//
//
// This file implements the pass. For every gpu.launch, in program order:
//   1. copy the constants it uses into its body (they must not become arguments);
//   2. outline the body into a gpu.func (MLIR's outlineKernelFunc): the buffers it uses
//      become its arguments, in first-use order;
//   3. look the function up by its code (printed without its name): a twin already in
//      `gpu.module @kernels` is reused and the new one dropped, else it is added there;
//   4. replace the launch by a gpu.launch_func of that kernel.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/outline_kernels_pass.h"

#include <map>
#include <string>

#include "compiler/lowering/planned_function.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Utils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"

namespace gpt_sft::compiler {
namespace {

/// Copies the constants defined outside `launch` that its body uses into the body's entry
/// block, so that they do not become kernel arguments. MLIR's sinkOperationsIntoLaunchOp does
/// the same but rewrites through replaceAllUsesInRegionWith, which visits every use of the
/// constant in the whole function: a step's few shared constants have thousands of uses, and
/// that made outlining quadratic in the launches (two minutes at depth 20). Here only the
/// body's own operands are visited.
void SinkConstants(mlir::gpu::LaunchOp launch) {
  mlir::Region& body = launch.getBody();
  mlir::OpBuilder b = mlir::OpBuilder::atBlockBegin(&body.front());
  llvm::DenseMap<mlir::Operation*, mlir::Value> sunk;
  body.walk([&](mlir::Operation* op) {
    for (mlir::OpOperand& use : op->getOpOperands()) {
      auto constant = use.get().getDefiningOp<mlir::arith::ConstantOp>();
      if (!constant || body.isAncestor(constant->getParentRegion())) continue;
      mlir::Value& copy = sunk[constant];
      if (!copy) copy = b.clone(*constant)->getResult(0);
      use.set(copy);
    }
  });
}

/// The kernel's code with its name left out: equal for twins.
std::string CodeKey(mlir::gpu::GPUFuncOp fn) {
  const std::string name = fn.getName().str();
  fn.setName("kernel");
  fn->removeAttr("known_grid_size");
  std::string text;
  llvm::raw_string_ostream os(text);
  fn.print(os);
  fn.setName(name);
  return os.str();
}

class OutlineKernelsPass : public mlir::PassWrapper<OutlineKernelsPass, mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OutlineKernelsPass)

  llvm::StringRef getArgument() const final { return "gpt-outline-kernels"; }
  llvm::StringRef getDescription() const final {
    return "Outline the launch schedules' gpu.launch bodies into one gpu.module, one kernel per distinct code";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::gpu::GPUDialect, mlir::arith::ArithDialect>();
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    llvm::SmallVector<mlir::gpu::LaunchOp> launches;
    module.walk([&](mlir::gpu::LaunchOp launch) { launches.push_back(launch); });
    if (launches.empty()) return;
    module->setAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName(), mlir::UnitAttr::get(&getContext()));
    mlir::gpu::GPUModuleOp kernels = KernelModule(module);
    mlir::SymbolTable symbols(kernels);
    std::map<std::string, mlir::gpu::GPUFuncOp> by_code;
    for (mlir::gpu::LaunchOp launch : launches) {
      SinkConstants(launch);
      std::string name = "kernel";
      if (auto attr = launch->getAttrOfType<mlir::StringAttr>(lowering::OpLowering::kKernelNameAttr)) name = attr.str();
      llvm::SmallVector<mlir::Value> operands;
      mlir::gpu::GPUFuncOp fn = mlir::outlineKernelFunc(launch, name, operands);
      const std::string key = CodeKey(fn);
      auto [it, inserted] = by_code.emplace(key, fn);
      if (inserted) {
        symbols.insert(fn);
      } else {
        fn.erase();
      }
      mlir::OpBuilder b(launch);
      auto launch_func = b.create<mlir::gpu::LaunchFuncOp>(launch.getLoc(), it->second, launch.getGridSizeOperandValues(),
                                                           launch.getBlockSizeOperandValues(),
                                                           launch.getDynamicSharedMemorySize(), operands);
      if (auto op = launch->getAttr(lowering::kOpNameAttr)) launch_func->setAttr(lowering::kOpNameAttr, op);
      launch.erase();
    }
  }

 private:
  static mlir::gpu::GPUModuleOp KernelModule(mlir::ModuleOp module) {
    for (auto existing : module.getOps<mlir::gpu::GPUModuleOp>()) {
      if (existing.getName() == kKernelModuleName) return existing;
    }
    mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(module.getBody());
    return b.create<mlir::gpu::GPUModuleOp>(module.getLoc(), kKernelModuleName);
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateOutlineKernelsPass() { return std::make_unique<OutlineKernelsPass>(); }

void RegisterOutlineKernelsPass() { mlir::PassRegistration<OutlineKernelsPass>(); }

}  // namespace gpt_sft::compiler
