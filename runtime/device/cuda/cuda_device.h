// The cuda driver: the device seam over the CUDA driver API (cuda_api.h, dlopen'ed).
//   * Buffers are cuMemAlloc allocations; a kernel argument is the range's device address.
//   * Modules are PTX (the cuda target's, for sm_90), JIT-compiled by the driver at load; a
//     module that fails is an error with its name and the JIT's log.
//   * One non-blocking stream. A command buffer's launches (cuLaunchKernel with the arguments
//     packed once at record time), copies and fills run on it. From its second submission on,
//     a command buffer without host calls is captured once into a CUDA graph and replayed
//     (the step's shapes are static, so the graph stays exact); with host calls (the
//     collectives of data-parallel ranks) or profiling on, its commands are enqueued one by one.
//   * Markers and the per-label profile come from CUDA events.
#ifndef GPT_SFT_RUNTIME_DEVICE_CUDA_CUDA_DEVICE_H_
#define GPT_SFT_RUNTIME_DEVICE_CUDA_CUDA_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device/device.h"

namespace gpt_sft::runtime::device::cuda {

/// The `index`-th CUDA device. No driver, a driver that fails to start or no such device:
/// InvalidArgument saying what was found (meant for a --device flag's error).
absl::StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int index, const DeviceOptions& options);

/// "NVIDIA H200 (sm_90, 132 SMs, 140 GiB)" per device; or why there is none.
absl::StatusOr<std::vector<std::string>> ListCudaDevices();

}  // namespace gpt_sft::runtime::device::cuda

#endif  // GPT_SFT_RUNTIME_DEVICE_CUDA_CUDA_DEVICE_H_
