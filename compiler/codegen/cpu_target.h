// The cpu target, end to end on the compiler side: a step module at stage `linalg` in, an
// artifact out whose module is the fusion kernels as a host shared object and whose launches
// are those kernels and the cpu driver's library builtins (compiler/lowering/cpu).
#ifndef GPT_SFT_COMPILER_CODEGEN_CPU_TARGET_H_
#define GPT_SFT_COMPILER_CODEGEN_CPU_TARGET_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "artifact/artifact.h"

namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace gpt_sft::compiler {

/// Runs gpt-lower-to-cpu on `module` (its fusions already compiled and tagged).
absl::Status LowerToCpuLaunches(mlir::ModuleOp module);
/// The whole target: fusion kernels for this host, the shared object, the launch list.
absl::StatusOr<artifact::Artifact> CompileForCpu(mlir::ModuleOp module);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_CPU_TARGET_H_
