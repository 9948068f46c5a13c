//===- launch_list.h - the launch schedule read into the artifact ---------===//
//
// Declares ExtractLaunchList: the last step out of MLIR. It reads every entry point's launch
// schedule (planned_function.h: a function over memrefs whose body is the launches in order)
// into the MLIR-free artifact (artifact/): the buffer slots (the arguments, by
// gpt.name, shared across entry points), the constants blob (every memref.global), and per
// function its arena size, results and launches, each argument resolved to buffer+offset or a
// scalar. What it reads:
//
//   gpu.launch_func          kernel: module, symbol, grid, block, dynamic workgroup bytes
//   gpt.launch_host_kernel   kernel of the host module over `elements` (cpu target)
//   gpt.call_builtin         builtin
//   memref.copy              copy
//   gpt.collective           collective
//
// and follows memref.view, memref.reinterpret_cast, memref.get_global and arith.constant to
// addresses and scalars. Anything else in a schedule is an error naming the op.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_LAUNCH_LIST_H_
#define GPT_SFT_COMPILER_LOWERING_LAUNCH_LIST_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "artifact/artifact.h"

namespace mlir {
class ModuleOp;
}  // namespace mlir

namespace gpt_sft::compiler::lowering {

/// Which artifact module each kernel launch refers to: gpu.module symbol -> index into
/// Artifact::modules, and the index of the host module (gpt.launch_host_kernel), -1 if none.
struct ModuleIndex {
  std::map<std::string, int> gpu_modules;
  int host_module = -1;
};

/// Reads every func.func of `module` that has the gpt.arena argument. Fills slots,
/// constants and functions; modules, key, target and compile time are the caller's.
absl::StatusOr<artifact::Artifact> ExtractLaunchList(mlir::ModuleOp module, const ModuleIndex& modules);

}  // namespace gpt_sft::compiler::lowering

#endif  // GPT_SFT_COMPILER_LOWERING_LAUNCH_LIST_H_
