// The OpenCL back end's last step out of MLIR: every spirv.module that gpt-gpu-to-spirv
// nested in a gpu.module is serialized to a SPIR-V binary and translated by llvm-spirv-15
// into SPIR 1.2 bitcode, the form the OpenCL runtime here (PoCL 3.1) builds with
// clCreateProgramWithBinary + "-x spir" (it takes no SPIR-V IL).
//
//   absl::StatusOr<std::vector<SpirKernels>> modules = CompileSpirKernels(module);
#ifndef GPT_SFT_COMPILER_CODEGEN_SPIR_KERNELS_H_
#define GPT_SFT_COMPILER_CODEGEN_SPIR_KERNELS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace gpt_sft::compiler {

struct SpirKernels {
  std::string gpu_module;             // the gpu.module's symbol (what gpu.launch_func names)
  std::string spirv_binary;           // SPIR-V words, little-endian
  std::string spir_bitcode;           // SPIR 1.2 bitcode (llvm-spirv-15 -r)
  std::vector<std::string> kernels;   // entry points
};

/// One per gpu.module that holds a converted spirv.module. Errors name the gpu.module and
/// carry the serializer's diagnostics or the translator's stderr.
absl::StatusOr<std::vector<SpirKernels>> CompileSpirKernels(mlir::ModuleOp module);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_SPIR_KERNELS_H_
