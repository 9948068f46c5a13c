// LaunchCost: one launch's work (launch_work.h) priced on one GPU (gpu_spec.h), roofline
// style:
//   compute = FLOPs / (peak of its unit x efficiency of its engine on that unit)
//   memory  = global bytes / (HBM bandwidth x kBandwidthEfficiency)
//           + local bytes / (L2 bandwidth x kBandwidthEfficiency)
//   time    = max(compute, memory)
// Local bytes are charged only where ptxas reports a stack frame or spills: frame (or spill
// bytes, if larger) x work-items x the frame touches per work-item LaunchWork states. Local
// memory that misses L1 is served by L2; with 1-2 KB frames per work-item it does (a block
// of 64 work-items needs 64-128 KB against L1's ~256 KB shared with workgroup memory).
// Efficiencies are fixed, not fitted: a lent GPU's measured times calibrate them later.
#ifndef GPT_SFT_COMPILER_COST_LAUNCH_COST_H_
#define GPT_SFT_COMPILER_COST_LAUNCH_COST_H_

#include <cstdint>
#include <optional>

#include "compiler/cost/gpu_spec.h"
#include "compiler/cost/launch_work.h"
#include "compiler/cost/ptxas_report.h"

namespace gpt_sft::compiler::cost {

/// Of the unit's peak: vendor libraries (cuBLASLt, cuDNN) reach ~70% on large products.
inline constexpr double kVendorLibraryEfficiency = 0.70;
/// Of the unit's peak: the compiler's own kernels, on tensor cores (mma) or fp32 cores.
inline constexpr double kGeneratedTensorCoreEfficiency = 0.50;
inline constexpr double kGeneratedCudaCoreEfficiency = 0.50;
/// Of the datasheet bandwidth a streaming kernel sustains (HBM and L2 alike).
inline constexpr double kBandwidthEfficiency = 0.80;

/// The efficiency `engine` reaches on `unit` (0 when nothing computes).
double Efficiency(Engine engine, ComputeUnit unit);

enum class Bound {
  kNone,     // nothing priced (collectives; zero work)
  kCompute,  // FLOPs at the unit's effective peak take longest
  kMemory,   // global bytes at effective HBM bandwidth take longest
  kLocal,    // memory-bound, and local-memory traffic is most of the memory time
};
/// "-", "compute", "memory", "local".
const char* BoundName(Bound bound);

struct LaunchCost {
  LaunchWork work;
  std::optional<KernelResources> resources;  // kernels, when ptxas ran
  int64_t local_bytes = 0;
  double compute_seconds = 0;
  double memory_seconds = 0;
  double seconds = 0;
  /// The time were its stack frame in registers: max(compute, global memory). The gap to
  /// `seconds` is what local memory costs, the figure that says whether removing it pays.
  double seconds_without_local = 0;
  Bound bound = Bound::kNone;
};

/// `work` priced on `gpu`; `resources` is the kernel's ptxas report, or null (not a kernel,
/// or no ptxas: then no local traffic is charged).
LaunchCost PriceLaunch(const LaunchWork& work, const GpuSpec& gpu, const KernelResources* resources);

}  // namespace gpt_sft::compiler::cost

#endif  // GPT_SFT_COMPILER_COST_LAUNCH_COST_H_
