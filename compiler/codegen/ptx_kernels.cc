// Implements CompilePtxKernels: each gpu.module is cloned into a module of its own, lowered
// there (the caller's launch schedule keeps its target-neutral kernels), and its gpu.binary's
// PTX taken out.
#include "compiler/codegen/ptx_kernels.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/pass_runner.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#ifndef GPT_CUDA_PREFIX
#error "GPT_CUDA_PREFIX must name the CUDA toolkit's default path (third_party/system_paths.bzl)"
#endif

namespace gpt_sft::compiler {
namespace {

/// What the NVVM pipeline needs beyond the step's dialects: NVVM, the LLVM IR translations
/// and the NVVM target's serializer.
void LoadNvvmDialects(mlir::MLIRContext& context) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::NVVM::NVVMDialect, mlir::LLVM::LLVMDialect>();
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::registerGPUDialectTranslation(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerConvertMathToLLVMInterface(registry);
  context.appendDialectRegistry(registry);
  context.loadDialect<mlir::NVVM::NVVMDialect, mlir::LLVM::LLVMDialect>();
}

void AddNvvmPipeline(mlir::PassManager& pm, const PtxOptions& options, const std::string& toolkit) {
  mlir::GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.optLevel = 3;
  pm.addPass(mlir::createGpuNVVMAttachTarget(target));
  mlir::OpPassManager& kernels = pm.nest<mlir::gpu::GPUModuleOp>();
  kernels.addPass(mlir::createConvertSCFToCFPass());
  mlir::ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;  // one pointer per buffer: the driver passes device addresses
  kernels.addPass(mlir::createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(mlir::createConvertMathToLLVMPass());  // fma and the rest libdevice does not take
  kernels.addPass(mlir::createCanonicalizerPass());
  kernels.addPass(mlir::createCSEPass());
  kernels.addPass(mlir::createReconcileUnrealizedCastsPass());
  mlir::GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = toolkit;
  binary.compilationTarget = "isa";  // PTX text: assembled by the driver's JIT at load
  pm.addPass(mlir::createGpuModuleToBinaryPass(binary));
}

/// The PTX of the single object of the gpu.binary `name` in `module`.
absl::StatusOr<std::string> PtxOf(mlir::ModuleOp module, const std::string& name) {
  for (auto binary : module.getOps<mlir::gpu::BinaryOp>()) {
    if (binary.getName() != name) continue;
    for (mlir::Attribute a : binary.getObjects()) {
      auto object = llvm::dyn_cast<mlir::gpu::ObjectAttr>(a);
      if (!object) continue;
      std::string ptx = object.getObject().str();
      while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();  // NVPTX ends the text with a NUL
      return ptx;
    }
  }
  return absl::InternalError(absl::StrCat("gpu-module-to-binary left no PTX for gpu.module @", name));
}

}  // namespace

std::string CudaToolkitPath(const PtxOptions& options) {
  if (!options.toolkit.empty()) return options.toolkit;
  if (const char* env = std::getenv("GPT_SFT_CUDA_PATH"); env != nullptr && env[0] != '\0') return env;
  return GPT_CUDA_PREFIX;
}

absl::StatusOr<std::vector<PtxKernels>> CompilePtxKernels(mlir::ModuleOp module, const PtxOptions& options) {
  const std::string toolkit = CudaToolkitPath(options);
  const std::string libdevice = toolkit + "/nvvm/libdevice/libdevice.10.bc";
  if (!std::filesystem::exists(libdevice)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the cuda target links the CUDA toolkit's libdevice, and ", libdevice,
                     " does not exist: install the toolkit or set GPT_SFT_CUDA_PATH to it"));
  }
  mlir::MLIRContext& context = *module.getContext();
  LoadNvvmDialects(context);
  std::vector<PtxKernels> out;
  for (auto gpu_module : module.getOps<mlir::gpu::GPUModuleOp>()) {
    PtxKernels kernels;
    kernels.gpu_module = gpu_module.getName().str();
    for (auto func : gpu_module.getOps<mlir::gpu::GPUFuncOp>()) {
      if (func.isKernel()) kernels.kernels.push_back(func.getName().str());
    }
    mlir::OpBuilder builder(&context);
    mlir::OwningOpRef<mlir::ModuleOp> alone = mlir::ModuleOp::create(gpu_module.getLoc());
    (*alone)->setAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName(), builder.getUnitAttr());
    builder.setInsertionPointToEnd(alone->getBody());
    builder.clone(*gpu_module.getOperation());
    mlir::PassManager pm(&context);
    AddNvvmPipeline(pm, options, toolkit);
    if (absl::Status s = RunPasses(pm, *alone, absl::StrCat("compiling gpu.module @", kernels.gpu_module, " to PTX"));
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::string> ptx = PtxOf(*alone, kernels.gpu_module);
    if (!ptx.ok()) return ptx.status();
    kernels.ptx = *std::move(ptx);
    out.push_back(std::move(kernels));
  }
  return out;
}

}  // namespace gpt_sft::compiler
