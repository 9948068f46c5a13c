// Implements PriceLaunch (the formula is in launch_cost.h).
#include "compiler/cost/launch_cost.h"

#include <algorithm>

namespace gpt_sft::compiler::cost {

double Efficiency(Engine engine, ComputeUnit unit) {
  if (unit == ComputeUnit::kNone) return 0;
  switch (engine) {
    case Engine::kNone: return 0;
    case Engine::kVendorLibrary: return kVendorLibraryEfficiency;
    case Engine::kGenerated:
      return unit == ComputeUnit::kFp32Core ? kGeneratedCudaCoreEfficiency : kGeneratedTensorCoreEfficiency;
  }
  return 0;
}

const char* BoundName(Bound bound) {
  switch (bound) {
    case Bound::kNone: return "-";
    case Bound::kCompute: return "compute";
    case Bound::kMemory: return "memory";
    case Bound::kLocal: return "local";
  }
  return "?";
}

LaunchCost PriceLaunch(const LaunchWork& work, const GpuSpec& gpu, const KernelResources* resources) {
  LaunchCost cost;
  cost.work = work;
  if (resources != nullptr) cost.resources = *resources;
  if (!work.priced) return cost;
  if (resources != nullptr && resources->UsesLocalMemory()) {
    const int64_t per_work_item =
        std::max({resources->stack_frame_bytes, resources->spill_store_bytes, resources->spill_load_bytes});
    cost.local_bytes = static_cast<int64_t>(static_cast<double>(per_work_item) *
                                            static_cast<double>(work.work_items) * work.frame_touches_per_work_item);
  }
  const double efficiency = Efficiency(work.engine, work.unit);
  const double peak = gpu.PeakFlops(work.unit) * efficiency;
  cost.compute_seconds = peak > 0 ? work.flops / peak : 0;
  const double global_seconds =
      static_cast<double>(work.bytes_read + work.bytes_written) / (gpu.dram_bytes_per_second * kBandwidthEfficiency);
  const double local_seconds =
      static_cast<double>(cost.local_bytes) / (gpu.l2_bytes_per_second * kBandwidthEfficiency);
  cost.memory_seconds = global_seconds + local_seconds;
  cost.seconds = std::max(cost.compute_seconds, cost.memory_seconds);
  cost.seconds_without_local = std::max(cost.compute_seconds, global_seconds);
  if (cost.seconds <= 0) return cost;
  if (cost.compute_seconds >= cost.memory_seconds) {
    cost.bound = Bound::kCompute;
  } else {
    cost.bound = local_seconds > global_seconds ? Bound::kLocal : Bound::kMemory;
  }
  return cost;
}

}  // namespace gpt_sft::compiler::cost
