// Registers the cuda driver as --device=cuda and --device=cuda:<n>.
#include "absl/strings/str_cat.h"
#include "runtime/device/cuda/cuda_device.h"
#include "runtime/device/driver_registry.h"

namespace gpt_sft::runtime::device::cuda {
namespace {

std::vector<std::string> Describe() {
  absl::StatusOr<std::vector<std::string>> devices = ListCudaDevices();
  if (!devices.ok()) return {absl::StrCat("cuda: unavailable (", devices.status().message(), ")")};
  std::vector<std::string> out;
  for (size_t i = 0; i < devices->size(); ++i) out.push_back(absl::StrCat("cuda:", i, ": ", (*devices)[i]));
  return out;
}

DriverEntry Entry() {
  DriverEntry e;
  e.name = "cuda";
  e.order = 2;
  e.indexed = true;
  e.open = [](int index, const DeviceOptions& options) { return CreateCudaDevice(index, options); };
  e.describe = Describe;
  return e;
}

[[maybe_unused]] const bool kRegistered = RegisterDriver(Entry());

}  // namespace
}  // namespace gpt_sft::runtime::device::cuda
