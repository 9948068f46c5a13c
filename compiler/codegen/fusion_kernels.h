//===- fusion_kernels.h - native code for the lowered fusions -------------===//
//
// Compiles the linalg.generic ops gpt-lower-fusions made (elementwise, identity maps,
// one static f32/f64 tensor type) to one relocatable object for the host CPU, through
// MLIR's LLVM dialect and LLVM's O3 pipeline, so the runtime can link it in
// (runtime/jit:object_library) and call one kernel per fusion instead of interpreting it.
//
//   absl::StatusOr<KernelObject> object = CompileFusionKernels(module);  // at Stage::kLinalg
//   // each generic now carries gpt.kernel = "gpt_fusion_<n>", its symbol in object->object
//
// MLIR-free on purpose: the consumer (runtime, trainer) needs only the ABI below.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_CODEGEN_FUSION_KERNELS_H_
#define GPT_SFT_COMPILER_CODEGEN_FUSION_KERNELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace gpt_sft::compiler {

/// ABI of every compiled kernel: buffers = the fusion's inputs then its results, each a
/// contiguous array of the fusion's element type; computes elements [begin, end) of the
/// flattened shape (identity maps make flattening exact), so a caller splits the range over threads.
using FusionKernelFn = void (*)(void* const* buffers, int64_t begin, int64_t end);

struct FusionKernel {
  std::string symbol;        // e.g. "gpt_fusion_3"; unique in the module
  int num_inputs = 0;
  int num_results = 0;
  int64_t num_elements = 0;  // of the flattened shape of the first generic it computes
  int element_bytes = 4;     // 4 (f32) or 8 (f64)
};

struct KernelObject {
  std::string object;     // relocatable ELF object for the host CPU (what is cached on disk)
  std::string llvm_ir;    // the optimized LLVM IR as text (gptc --emit=llvm prints it)
  std::string target;     // triple, CPU name and feature string: part of a cache key
  std::vector<FusionKernel> kernels;  // distinct kernels, in the order their first generic appears (walk order)
};

/// The attribute CompileFusionKernels sets on each generic: its kernel's symbol.
inline constexpr char kKernelAttrName[] = "gpt.kernel";

/// Compiles every linalg.generic gpt-lower-fusions made in `module` (any func) and sets on
/// each generic the string attribute `gpt.kernel` = its symbol, so a consumer walking the
/// module finds the kernel of each generic. Generics with equivalent bodies (same scalar ops
/// and constants, inputs, results and element type) share one kernel, whatever their shapes. Errors name the op and location.
/// Kernels are nounwind; f32 tanh is MLIR's polynomial approximation (so the loop
/// vectorizes), f64 tanh is libm's `tanh` (the object then needs it resolved at load).
absl::StatusOr<KernelObject> CompileFusionKernels(mlir::ModuleOp module);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_FUSION_KERNELS_H_
