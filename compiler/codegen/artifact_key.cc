// Implements ArtifactKey.
#include "compiler/codegen/artifact_key.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/xxhash.h"

namespace gpt_sft::compiler {

std::string ArtifactKey(const std::string& step_ir_as_built, const std::string& target, const std::string& dtype) {
  // Separators keep ("ab", "c") and ("a", "bc") apart.
  const std::string material =
      absl::StrCat(kCompilerVersion, "\n", target, "\ndtype ", dtype, "\n", step_ir_as_built);
  const uint64_t hash = llvm::xxh3_64bits(llvm::StringRef(material));
  return absl::StrFormat("%016x", hash);
}

}  // namespace gpt_sft::compiler
