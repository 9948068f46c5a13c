// The compile cache's key and the compiler version it carries. A key is a hash of the step's
// IR as built, the target's description, the step's dtype and the compiler version, so any
// change to one of them is a different artifact. MLIR-free.
#ifndef GPT_SFT_COMPILER_CODEGEN_ARTIFACT_KEY_H_
#define GPT_SFT_COMPILER_CODEGEN_ARTIFACT_KEY_H_

#include <string>

namespace gpt_sft::compiler {

/// The compiler version in every key. Bump it whenever a pass, a lowering, a builtin's contract
/// or the artifact layout changes what a step compiles to: artifacts of another version are
/// never loaded, so a stale cache entry is recompiled rather than run. What each version
/// encodes: artifact/FORMAT.md ("The cache key").
inline constexpr char kCompilerVersion[] = "gptc-8.14";  // bf16 storage on the GPU targets

/// xxh3 of `step_ir_as_built`, `target`, `dtype` (the step config's name: "f32", "bf16", ...)
/// and kCompilerVersion, as 16 hex digits. The dtype is named even though the IR shows it
/// (bf16 steps carry gpt.round_bf16), so no two numerics can share a key by accident.
std::string ArtifactKey(const std::string& step_ir_as_built, const std::string& target, const std::string& dtype);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_ARTIFACT_KEY_H_
