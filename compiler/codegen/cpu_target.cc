// Implements the cpu target's compile.
#include "compiler/codegen/cpu_target.h"

#include "absl/strings/str_cat.h"
#include "compiler/codegen/fusion_kernels.h"
#include "compiler/codegen/host_module.h"
#include "compiler/codegen/host_target.h"
#include "compiler/codegen/pass_runner.h"
#include "compiler/lowering/cpu/lower_to_cpu_pass.h"
#include "compiler/lowering/launch_list.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace gpt_sft::compiler {

absl::Status LowerToCpuLaunches(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  pm.addPass(CreateLowerToCpuPass());
  return RunPasses(pm, module, "lowering the step to the cpu driver's launches");
}

absl::StatusOr<artifact::Artifact> CompileForCpu(mlir::ModuleOp module) {
  absl::StatusOr<KernelObject> kernels = CompileFusionKernels(module);
  if (!kernels.ok()) return kernels.status();
  std::vector<artifact::KernelModule> modules;
  lowering::ModuleIndex index;
  if (!kernels->kernels.empty()) {
    absl::StatusOr<std::string> shared = LinkHostSharedObject(kernels->object);
    if (!shared.ok()) return shared.status();
    std::vector<std::string> symbols;
    for (const FusionKernel& k : kernels->kernels) symbols.push_back(k.symbol);
    modules.push_back({"fusions", artifact::ModuleFormat::kHostSharedObject, *std::move(shared), symbols});
    index.host_module = 0;
  }
  if (absl::Status s = LowerToCpuLaunches(module); !s.ok()) return s;
  absl::StatusOr<artifact::Artifact> artifact = lowering::ExtractLaunchList(module, index);
  if (!artifact.ok()) return artifact.status();
  artifact->modules = std::move(modules);
  artifact->target = "cpu";
  artifact->target_description = DetectHostTarget().Description();
  if (absl::Status s = artifact::Validate(*artifact); !s.ok()) {
    return absl::InternalError(absl::StrCat("the cpu artifact is inconsistent (a compiler bug): ", s.message()));
  }
  return artifact;
}

}  // namespace gpt_sft::compiler
