// RunPasses: a pass manager run whose failure is a Status carrying every diagnostic the
// passes emitted, each with its location (remarks left out), so a target's lowering error
// reaches the user naming the op at fault.
#ifndef GPT_SFT_COMPILER_CODEGEN_PASS_RUNNER_H_
#define GPT_SFT_COMPILER_CODEGEN_PASS_RUNNER_H_

#include <string_view>

#include "absl/status/status.h"

namespace mlir {
class ModuleOp;
class PassManager;
}  // namespace mlir

namespace gpt_sft::compiler {

/// Runs `pm` on `module`; Internal "<what> failed:" and the diagnostics when it fails. With
/// GPT_SFT_PASS_TIMING=1 in the environment, prints MLIR's pass timing report to stderr.
absl::Status RunPasses(mlir::PassManager& pm, mlir::ModuleOp module, std::string_view what);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_PASS_RUNNER_H_
