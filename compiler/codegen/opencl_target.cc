// Implements the opencl target's compile: passes, SPIR bitcode, launch list.
#include "compiler/codegen/opencl_target.h"

#include "absl/strings/str_cat.h"
#include "compiler/codegen/pass_runner.h"
#include "compiler/codegen/spir_kernels.h"
#include "compiler/lowering/gpu/lower_to_gpu_pass.h"
#include "compiler/lowering/gpu/outline_kernels_pass.h"
#include "compiler/lowering/launch_list.h"
#include "compiler/lowering/spirv/gpu_to_spirv_pass.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace gpt_sft::compiler {

absl::Status LowerToGpuKernels(mlir::ModuleOp module, const gpu_lowering::GpuLoweringOptions& options) {
  mlir::PassManager pm(module.getContext());
  pm.addPass(CreateLowerToGpuPass(options));
  pm.addPass(CreateOutlineKernelsPass());
  return RunPasses(pm, module, "lowering the step to GPU kernels");
}

absl::Status LowerGpuKernelsToSpirv(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  pm.addPass(CreateGpuToSpirvPass());
  return RunPasses(pm, module, "lowering the GPU kernels to SPIR-V");
}

absl::StatusOr<artifact::Artifact> CompileForOpenCl(mlir::ModuleOp module, GemmChoice gemm) {
  gpu_lowering::GpuLoweringOptions lowering;
  if (gemm == GemmChoice::kVendor) lowering.gemm = gpu_lowering::GemmBackend::kVendorBuiltin;
  if (absl::Status s = LowerToGpuKernels(module, lowering); !s.ok()) return s;
  if (absl::Status s = LowerGpuKernelsToSpirv(module); !s.ok()) return s;
  absl::StatusOr<std::vector<SpirKernels>> spir = CompileSpirKernels(module);
  if (!spir.ok()) return spir.status();
  lowering::ModuleIndex index;
  std::vector<artifact::KernelModule> modules;
  for (SpirKernels& k : *spir) {
    index.gpu_modules[k.gpu_module] = static_cast<int>(modules.size());
    modules.push_back({k.gpu_module, artifact::ModuleFormat::kSpir, std::move(k.spir_bitcode), k.kernels});
  }
  absl::StatusOr<artifact::Artifact> artifact = lowering::ExtractLaunchList(module, index);
  if (!artifact.ok()) return artifact.status();
  artifact->modules = std::move(modules);
  artifact->target = "opencl";
  artifact->target_description = "SPIR 1.2 (spir64) from SPIR-V 1.0 Kernel, llvm-spirv-15";
  if (absl::Status s = artifact::Validate(*artifact); !s.ok()) {
    return absl::InternalError(absl::StrCat("the opencl artifact is inconsistent (a compiler bug): ", s.message()));
  }
  return artifact;
}

}  // namespace gpt_sft::compiler
