// Registers the opencl driver as --device=opencl and --device=opencl:<n>.
#include "absl/strings/str_cat.h"
#include "runtime/device/opencl/opencl_device.h"
#include "runtime/device/driver_registry.h"

namespace gpt_sft::runtime::device::opencl {
namespace {

std::vector<std::string> Describe() {
  absl::StatusOr<std::vector<std::string>> devices = ListOpenClDevices();
  if (!devices.ok()) return {absl::StrCat("opencl: unavailable (", devices.status().message(), ")")};
  std::vector<std::string> out;
  for (size_t i = 0; i < devices->size(); ++i) out.push_back(absl::StrCat("opencl:", i, ": ", (*devices)[i]));
  return out;
}

DriverEntry Entry() {
  DriverEntry e;
  e.name = "opencl";
  e.order = 1;
  e.indexed = true;
  e.open = [](int index, const DeviceOptions& options) { return CreateOpenClDevice(index, options); };
  e.describe = Describe;
  return e;
}

[[maybe_unused]] const bool kRegistered = RegisterDriver(Entry());

}  // namespace
}  // namespace gpt_sft::runtime::device::opencl
