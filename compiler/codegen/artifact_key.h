// The compile cache's key and the compiler version it carries. A key is a hash of the step's
// IR as built, the target's description and the compiler version, so any change to one of
// them is a different artifact. MLIR-free.
#ifndef GPT_SFT_COMPILER_CODEGEN_ARTIFACT_KEY_H_
#define GPT_SFT_COMPILER_CODEGEN_ARTIFACT_KEY_H_

#include <string>

namespace gpt_sft::compiler {

/// Bumped whenever a pass, the lowering or the artifact layout changes what a step compiles
/// to: artifacts of another version are never loaded.
inline constexpr char kCompilerVersion[] = "gptc-7.0";

/// xxh3 of `step_ir_as_built`, `target` and kCompilerVersion, as 16 hex digits.
std::string ArtifactKey(const std::string& step_ir_as_built, const std::string& target);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_ARTIFACT_KEY_H_
