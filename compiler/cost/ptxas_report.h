// What ptxas says about each kernel of an artifact (`ptxas -arch=sm_90 -v`): registers,
// stack frame, spill stores and loads, static shared memory. The cost model flags a kernel
// with a stack frame or spills and charges its local-memory traffic (launch_cost.h); the
// parse is plain text, so it is tested on a captured report without a CUDA toolkit.
#ifndef GPT_SFT_COMPILER_COST_PTXAS_REPORT_H_
#define GPT_SFT_COMPILER_COST_PTXAS_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "artifact/artifact.h"

namespace gpt_sft::compiler::cost {

struct KernelResources {
  int registers = 0;
  int64_t stack_frame_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t shared_bytes = 0;  // static shared memory ("smem"); dynamic is the launch's workgroup_bytes

  /// A stack frame or spills: per-work-item data in local memory, which DESIGN.md forbids.
  bool UsesLocalMemory() const { return stack_frame_bytes > 0 || spill_store_bytes > 0 || spill_load_bytes > 0; }
};

/// Entry points by symbol, from the text ptxas -v writes to stderr. Device functions' own
/// "Function properties" lines are skipped. InvalidArgument when an entry has no "Used N
/// registers" line (not a ptxas -v report).
absl::StatusOr<std::map<std::string, KernelResources>> ParsePtxasReport(std::string_view text);

/// Kernels by (module index, symbol): what RunPtxas found.
using ArtifactResources = std::map<std::pair<int, std::string>, KernelResources>;

/// The report each module carries (the compiler assembled it: artifact::KernelModule's
/// assembler_report), else assembles each PTX module of `artifact` with `ptxas` (an absolute
/// path) for `arch` in a scratch directory, once per module; parses the reports. FailedPrecondition when ptxas
/// is not there (callers then print "n/a (no ptxas)"); other modules formats are skipped.
absl::StatusOr<ArtifactResources> RunPtxas(const artifact::Artifact& artifact, const std::string& ptxas,
                                          const std::string& arch = "sm_90");

}  // namespace gpt_sft::compiler::cost

#endif  // GPT_SFT_COMPILER_COST_PTXAS_REPORT_H_
