// Implements the cuda target's compile: the GPU kernels, their PTX, the launch list.
#include "compiler/codegen/cuda_target.h"

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cuda_assembly.h"
#include "compiler/codegen/opencl_target.h"
#include "compiler/lowering/launch_list.h"
#include "mlir/IR/BuiltinOps.h"

namespace gpt_sft::compiler {

absl::StatusOr<artifact::Artifact> CompileForCuda(mlir::ModuleOp module, GemmChoice gemm, AttentionChoice attention,
                                                  const PtxOptions& options) {
  gpu_lowering::GpuLoweringOptions lowering;
  lowering.gemm = gemm == GemmChoice::kVendor ? gpu_lowering::GemmBackend::kVendorBuiltin
                                              : gpu_lowering::GemmBackend::kTiledKernel;
  if (attention == AttentionChoice::kCudnn) lowering.attention = gpu_lowering::AttentionBackend::kCudnnBuiltin;
  lowering.mma = gpu_lowering::MmaRealization::kNvvm;
  if (absl::Status s = LowerToGpuKernels(module, lowering); !s.ok()) return s;
  absl::StatusOr<std::vector<PtxKernels>> ptx = CompilePtxKernels(module, options);
  if (!ptx.ok()) return ptx.status();
  lowering::ModuleIndex index;
  std::vector<artifact::KernelModule> modules;
  const std::string toolkit = CudaToolkitPath(options);
  const bool assemble = CanAssembleCuda(toolkit);
  for (PtxKernels& k : *ptx) {
    index.gpu_modules[k.gpu_module] = static_cast<int>(modules.size());
    if (!assemble) {
      modules.push_back({k.gpu_module, artifact::ModuleFormat::kPtx, std::move(k.ptx), k.kernels, "", ""});
      continue;
    }
    absl::StatusOr<AssembledCudaModule> assembled = AssembleCudaModule(k.ptx, options.chip, toolkit);
    if (!assembled.ok()) {
      return absl::Status(assembled.status().code(), absl::StrCat("gpu module '", k.gpu_module, "' for ", options.chip,
                                                                  ": ", assembled.status().message()));
    }
    modules.push_back({k.gpu_module, artifact::ModuleFormat::kCudaFatbin, std::move(assembled->fatbin), k.kernels,
                       std::move(k.ptx), std::move(assembled->report)});
  }
  absl::StatusOr<artifact::Artifact> artifact = lowering::ExtractLaunchList(module, index);
  if (!artifact.ok()) return artifact.status();
  artifact->modules = std::move(modules);
  artifact->target = "cuda";
  artifact->target_description = absl::StrCat(
      assemble ? absl::StrCat("SASS for ", options.chip, " + PTX, assembled by ptxas at compile time")
               : absl::StrCat("PTX for ", options.chip, ", JIT-compiled at load (no ptxas at compile time)"),
      "; NVVM, LLVM NVPTX, libdevice linked; gemms: ",
                                              gemm == GemmChoice::kVendor ? "cuBLASLt" : "the compiler's tiled kernel",
      "; attention: ",
      attention == AttentionChoice::kCudnn ? "cuDNN SDPA (packed rows: the generated kernels)" : "the generated kernels");
  if (absl::Status s = artifact::Validate(*artifact); !s.ok()) {
    return absl::InternalError(absl::StrCat("the cuda artifact is inconsistent (a compiler bug): ", s.message()));
  }
  return artifact;
}

}  // namespace gpt_sft::compiler
