// Implements RunPasses.
#include "compiler/codegen/pass_runner.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

namespace gpt_sft::compiler {

absl::Status RunPasses(mlir::PassManager& pm, mlir::ModuleOp module, std::string_view what) {
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic& d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Remark) return mlir::success();
    std::string location;
    llvm::raw_string_ostream os(location);
    d.getLocation().print(os);
    absl::StrAppend(&diagnostics, os.str(), ": ", d.str(), "\n");
    return mlir::success();
  });
  // GPT_SFT_PASS_TIMING=1: MLIR's per-pass wall-time report on stderr, for every pipeline the
  // compiler runs (gptc, the trainer's compile), to see where a slow compile spends its time.
  if (const char* timing = std::getenv("GPT_SFT_PASS_TIMING"); timing != nullptr && std::string(timing) == "1") {
    pm.enableTiming();
  }
  if (mlir::failed(pm.run(module))) return absl::InternalError(absl::StrCat(std::string(what), " failed:\n", diagnostics));
  return absl::OkStatus();
}

}  // namespace gpt_sft::compiler
