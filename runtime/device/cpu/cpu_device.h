// The cpu driver: the device seam (runtime/device/device.h) over this machine's cores.
//   * Buffers are host memory: each allocation its own mapping (host_memory.h; Discard gives
//     the pages back), or the caller's memory wrapped with no copy (the ParamStore's weights).
//   * Modules are host shared objects (compiler/codegen's fusion kernels), loaded without LLVM:
//     the bytes go to a memfd that dlopen opens. A kernel is a range kernel
//     `void(void* const* buffers, int64 begin, int64 end)` launched over grid[0] elements,
//     split over the threads in chunks of 16K elements.
//   * Builtins are the CPU library kernels (host_builtins.h), each prepared once when
//     recorded; they share one workspace block sized for the largest.
//   * Command buffers run synchronously in order on Submit; the first error stops them and
//     is returned naming the command's label.
#ifndef GPT_SFT_RUNTIME_DEVICE_CPU_CPU_DEVICE_H_
#define GPT_SFT_RUNTIME_DEVICE_CPU_CPU_DEVICE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "runtime/device/device.h"

namespace gpt_sft::runtime::device::cpu {

/// The cpu device; options.num_threads > 0 sets the kernels' thread count.
absl::StatusOr<std::unique_ptr<Device>> CreateCpuDevice(const DeviceOptions& options);

}  // namespace gpt_sft::runtime::device::cpu

#endif  // GPT_SFT_RUNTIME_DEVICE_CPU_CPU_DEVICE_H_
