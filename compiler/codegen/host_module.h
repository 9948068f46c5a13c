// The cpu target's kernel module: the fusion kernels' relocatable object (fusion_kernels.h)
// linked by lld into an ELF shared object, which the cpu driver dlopens - so running the
// step needs no LLVM, only the C library's loader.
#ifndef GPT_SFT_COMPILER_CODEGEN_HOST_MODULE_H_
#define GPT_SFT_COMPILER_CODEGEN_HOST_MODULE_H_

#include <string>

#include "absl/status/statusor.h"

namespace gpt_sft::compiler {

/// The shared object of `object` (its undefined symbols, libm's, left to the loader). Errors
/// name the linker and carry its stderr.
absl::StatusOr<std::string> LinkHostSharedObject(const std::string& object);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_HOST_MODULE_H_
