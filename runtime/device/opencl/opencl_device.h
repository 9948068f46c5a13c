// The opencl driver: the device seam over any OpenCL 2.0+ runtime the ocl-icd loader finds
// (PoCL on the CPU here; a GPU vendor's ICD elsewhere).
//   * Buffers are cl_mem; a kernel argument that is part of a buffer becomes a sub-buffer,
//     made once when the launch is recorded (its offset must be a multiple of the device's
//     base-address alignment: the compiler plans GPU buffers on 256 bytes).
//   * Modules are SPIR 1.2 bitcode, built with "-x spir -spir-std=1.2"; a build failure is an
//     error with the module's name and the driver's build log.
//   * Each recorded launch owns a cl_kernel whose arguments are set once; Submit only enqueues
//     (global size = grid x block, local size = block). Host calls wait for the queue first.
//   * One in-order queue with profiling on: markers and the per-label profile come from events.
#ifndef GPT_SFT_RUNTIME_DEVICE_OPENCL_OPENCL_DEVICE_H_
#define GPT_SFT_RUNTIME_DEVICE_OPENCL_OPENCL_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device/device.h"

namespace gpt_sft::runtime::device::opencl {

/// The `index`-th device over every OpenCL platform, in platform order. No loader, no
/// platform or no such device: InvalidArgument saying what was found.
absl::StatusOr<std::unique_ptr<Device>> CreateOpenClDevice(int index, const DeviceOptions& options);

/// "PoCL 3.1+debian: pthread-skylake-avx512-... (CPU)" per device; or why there is none.
absl::StatusOr<std::vector<std::string>> ListOpenClDevices();

}  // namespace gpt_sft::runtime::device::opencl

#endif  // GPT_SFT_RUNTIME_DEVICE_OPENCL_OPENCL_DEVICE_H_
