// StepArtifact: what compiling one training step produces and what runtime/executable loads
// (DESIGN.md "Compiler pipeline", step 7):
//   * the step's IR at the linalg stage: every op result placed in the arena by
//     gpt-plan-buffers (gpt.offsets / gpt.donates), every fusion a linalg.generic that
//     names its compiled kernel (gpt.kernel) - this is the launch schedule, in op order;
//   * the fusion kernels' object code for the host CPU;
//   * the key it is cached under: a hash of the step's IR as built, the target and the
//     compiler version, so any change to one of them is a different artifact.
// MLIR-free: the trainer and the cache handle artifacts as data.
#ifndef GPT_SFT_COMPILER_CODEGEN_STEP_ARTIFACT_H_
#define GPT_SFT_COMPILER_CODEGEN_STEP_ARTIFACT_H_

#include <string>

#include "compiler/codegen/fusion_kernels.h"

namespace gpt_sft::compiler {

/// Bumped whenever a pass, the lowering or the artifact layout changes what a step compiles
/// to: artifacts of another version are never loaded.
inline constexpr char kCompilerVersion[] = "gptc-6.0";

struct StepArtifact {
  std::string key;          // 16 hex digits (ArtifactKey)
  std::string step_ir;      // MLIR text of the linalg stage, gpt.kernel on every generic
  KernelObject kernels;     // object code + symbol table
  double compile_seconds = 0;  // what compiling it took (build, passes, codegen)
};

/// xxh3 of `step_ir_as_built`, `target` and kCompilerVersion, as 16 hex digits.
std::string ArtifactKey(const std::string& step_ir_as_built, const std::string& target);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_STEP_ARTIFACT_H_
