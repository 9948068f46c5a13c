#include "compiler/transforms/pipeline.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/transforms/autodiff_pass.h"
#include "compiler/transforms/bf16_storage.h"
#include "compiler/transforms/elide_gemm_input_rounding_pass.h"
#include "compiler/transforms/lower_fusions_pass.h"
#include "compiler/transforms/plan_buffers_pass.h"
#include "compiler/transforms/fuse_pass.h"
#include "compiler/transforms/verify_static_pass.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace gpt_sft::compiler {

std::vector<std::string> StageNames() { return {"gpt", "autodiff", "fused", "planned", "linalg"}; }

absl::Status ParseStage(const std::string& name, Stage* stage) {
  if (name == "gpt") {
    *stage = Stage::kGpt;
  } else if (name == "autodiff") {
    *stage = Stage::kAutodiff;
  } else if (name == "fused") {
    *stage = Stage::kFused;
  } else if (name == "planned") {
    *stage = Stage::kPlanned;
  } else if (name == "linalg") {
    *stage = Stage::kLinalg;
  } else {
    std::vector<std::string> names = StageNames();
    return absl::InvalidArgumentError(
        absl::StrCat("unknown stage '", name, "'; expected one of: ", absl::StrJoin(names, ", ")));
  }
  return absl::OkStatus();
}

TargetPasses CpuTargetPasses() { return {.gemms_round_bf16_inputs = true, .bf16_softcap_builtins = true}; }

TargetPasses GpuTargetPasses() { return {.bf16_storage = true}; }

absl::Status RunToStage(mlir::ModuleOp module, Stage stage, bool print_ir_after_all,
                        std::vector<std::string>* remarks, int64_t buffer_alignment, const TargetPasses& target) {
  if (stage == Stage::kGpt) return absl::OkStatus();
  mlir::MLIRContext* context = module.getContext();
  mlir::PassManager pm(context);
  if (print_ir_after_all) {
    context->disableMultithreading();
    pm.enableIRPrinting(/*shouldPrintBeforePass=*/[](mlir::Pass*, mlir::Operation*) { return false; });
  }
  pm.addPass(CreateAutodiffPass());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (stage == Stage::kFused || stage == Stage::kPlanned || stage == Stage::kLinalg) {
    pm.addPass(CreateVerifyStaticPass());
    if (target.gemms_round_bf16_inputs) pm.addPass(CreateElideGemmInputRoundingPass());
    pm.addPass(CreateFusePass(target.bf16_softcap_builtins));
  }
  if ((stage == Stage::kPlanned || stage == Stage::kLinalg) && target.bf16_storage) {
    pm.addPass(CreateMarkBf16StoragePass());
  }
  if (stage == Stage::kPlanned || stage == Stage::kLinalg) pm.addPass(CreatePlanBuffersPass(buffer_alignment));
  if (stage == Stage::kLinalg) pm.addPass(CreateLowerFusionsPass());
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic& d) {
    std::string location;
    llvm::raw_string_ostream os(location);
    d.getLocation().print(os);
    if (d.getSeverity() == mlir::DiagnosticSeverity::Remark) {
      if (remarks != nullptr) remarks->push_back(absl::StrCat(os.str(), ": ", d.str()));
      return mlir::success();
    }
    absl::StrAppend(&diagnostics, os.str(), ": ", d.str(), "\n");
    return mlir::success();
  });
  if (mlir::failed(pm.run(module))) {
    return absl::InternalError(absl::StrCat("the compiler pipeline failed:\n", diagnostics));
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::compiler
