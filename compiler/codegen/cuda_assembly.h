// CudaAssembly: the cuda target's PTX assembled at compile time, so that no GPU compiles it at
// load. The toolkit's ptxas makes SASS for the target chip (its -v report, per kernel:
// registers, stack frame, spills, shared memory, goes into the artifact), and fatbinary packs
// that SASS with the PTX into one fat binary: cuModuleLoadData runs the SASS on that chip and
// JIT-compiles the PTX only on another one. Without the toolkit's ptxas and fatbinary the
// module stays PTX (the driver JIT-compiles it at load, as before).
#ifndef GPT_SFT_COMPILER_CODEGEN_CUDA_ASSEMBLY_H_
#define GPT_SFT_COMPILER_CODEGEN_CUDA_ASSEMBLY_H_

#include <string>

#include "absl/status/statusor.h"

namespace gpt_sft::compiler {

struct AssembledCudaModule {
  std::string fatbin;  // SASS for the chip + the PTX
  std::string report;  // ptxas -v, one block per kernel
};

/// Whether `toolkit` holds bin/ptxas and bin/fatbinary.
bool CanAssembleCuda(const std::string& toolkit);

/// Assembles `ptx` for `chip` ("sm_90"). Errors carry ptxas's or fatbinary's message.
absl::StatusOr<AssembledCudaModule> AssembleCudaModule(const std::string& ptx, const std::string& chip,
                                                       const std::string& toolkit);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_CUDA_ASSEMBLY_H_
