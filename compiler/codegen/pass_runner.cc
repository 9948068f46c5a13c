// Implements RunPasses.
#include "compiler/codegen/pass_runner.h"

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
  if (mlir::failed(pm.run(module))) return absl::InternalError(absl::StrCat(std::string(what), " failed:\n", diagnostics));
  return absl::OkStatus();
}

}  // namespace gpt_sft::compiler
