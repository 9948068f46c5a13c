// Implements CreateDevice and DescribeDrivers over the drivers this binary links (see
// driver_registry.h).
#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/device/device.h"
#include "runtime/device/driver_registry.h"

namespace gpt_sft::runtime::device {
namespace {

// Constructed on first use: drivers register from static initialisers in other files, whose
// order against this one is unspecified.
std::vector<DriverEntry>& Drivers() {
  static auto* drivers = new std::vector<DriverEntry>();
  return *drivers;
}

std::string SpecsBuiltIn() {
  std::vector<std::string> specs;
  for (const DriverEntry& d : Drivers()) {
    specs.emplace_back(d.name);
    if (d.indexed) specs.push_back(absl::StrCat(std::string(d.name), ":<n>"));
  }
  return specs.empty() ? "none" : absl::StrJoin(specs, ", ");
}

}  // namespace

bool RegisterDriver(const DriverEntry& entry) {
  std::vector<DriverEntry>& drivers = Drivers();
  auto at = std::find_if(drivers.begin(), drivers.end(), [&](const DriverEntry& d) { return d.order > entry.order; });
  drivers.insert(at, entry);
  return true;
}

absl::StatusOr<std::unique_ptr<Device>> CreateDevice(std::string_view spec, const DeviceOptions& options) {
  for (const DriverEntry& d : Drivers()) {
    if (spec == d.name) return d.open(0, options);
    if (!d.indexed || spec.size() <= d.name.size() || spec.substr(0, d.name.size()) != d.name ||
        spec[d.name.size()] != ':') {
      continue;
    }
    int index = 0;
    if (!absl::SimpleAtoi(std::string(spec.substr(d.name.size() + 1)), &index) || index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", std::string(spec), "': the ", std::string(d.name), " device index must be a number >= 0"));
    }
    return d.open(index, options);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", std::string(spec), "' is not a device of this binary (drivers: ", SpecsBuiltIn(), ")"));
}

std::vector<std::string> DescribeDrivers() {
  std::vector<std::string> out;
  for (const DriverEntry& d : Drivers()) {
    std::vector<std::string> lines = d.describe();
    out.insert(out.end(), lines.begin(), lines.end());
  }
  return out;
}

}  // namespace gpt_sft::runtime::device
