// Registers the cpu driver as --device=cpu.
#include "runtime/device/cpu/cpu_device.h"
#include "runtime/device/driver_registry.h"

namespace gpt_sft::runtime::device::cpu {
namespace {

DriverEntry Entry() {
  DriverEntry e;
  e.name = "cpu";
  e.order = 0;
  e.indexed = false;
  e.open = [](int, const DeviceOptions& options) { return CreateCpuDevice(options); };
  e.describe = []() { return std::vector<std::string>{"cpu: available"}; };
  return e;
}

[[maybe_unused]] const bool kRegistered = RegisterDriver(Entry());

}  // namespace
}  // namespace gpt_sft::runtime::device::cpu
