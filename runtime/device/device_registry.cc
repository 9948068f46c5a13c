// Implements CreateDevice and DescribeDrivers over the drivers built in (none yet: the cpu
// and opencl drivers land with runtime/device/cpu and runtime/device/opencl).
#include "absl/strings/str_cat.h"
#include "runtime/device/device.h"

namespace gpt_sft::runtime::device {

absl::StatusOr<std::unique_ptr<Device>> CreateDevice(std::string_view spec, const DeviceOptions&) {
  return absl::InvalidArgumentError(
      absl::StrCat("'", std::string(spec), "': this build has no device drivers yet"));
}

std::vector<std::string> DescribeDrivers() { return {}; }

}  // namespace gpt_sft::runtime::device
