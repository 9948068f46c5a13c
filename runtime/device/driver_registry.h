// The registry behind CreateDevice and DescribeDrivers: each driver adds one entry from its
// own registration file (a `:driver` library with alwayslink), so a binary carries exactly
// the drivers it links. //runtime/device links them all; the GPU bundle's runner links only
// //runtime/device/cuda:driver and so carries no BLAS and no OpenCL loader.
#ifndef GPT_SFT_RUNTIME_DEVICE_DRIVER_REGISTRY_H_
#define GPT_SFT_RUNTIME_DEVICE_DRIVER_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device/device.h"

namespace gpt_sft::runtime::device {

struct DriverEntry {
  /// The --device spelling: "cpu", "opencl", "cuda".
  std::string_view name;
  /// Where DescribeDrivers and the error listing the drivers put it (smaller first).
  int order = 0;
  /// Whether "<name>:<n>" picks the n-th device; "<name>" alone is device 0.
  bool indexed = false;
  absl::StatusOr<std::unique_ptr<Device>> (*open)(int index, const DeviceOptions& options) = nullptr;
  /// DescribeDrivers' lines for this driver ("cpu: available", "opencl:0: PoCL ...").
  std::vector<std::string> (*describe)() = nullptr;
};

/// Adds `entry` (at static initialisation: `static const bool kRegistered = RegisterDriver(...)`).
/// Returns true so that it can initialise such a constant.
bool RegisterDriver(const DriverEntry& entry);

}  // namespace gpt_sft::runtime::device

#endif  // GPT_SFT_RUNTIME_DEVICE_DRIVER_REGISTRY_H_
