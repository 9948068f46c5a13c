// Implements CreateDevice and DescribeDrivers over the drivers built in.
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/device/cpu/cpu_device.h"
#include "runtime/device/cuda/cuda_device.h"
#include "runtime/device/device.h"
#include "runtime/device/opencl/opencl_device.h"

namespace gpt_sft::runtime::device {

absl::StatusOr<std::unique_ptr<Device>> CreateDevice(std::string_view spec, const DeviceOptions& options) {
  if (spec == "cpu") return cpu::CreateCpuDevice(options);
  if (spec == "opencl") return opencl::CreateOpenClDevice(0, options);
  if (spec == "cuda") return cuda::CreateCudaDevice(0, options);
  for (const auto& [prefix, what] : {std::pair<std::string_view, std::string_view>{"opencl:", "OpenCL"}, {"cuda:", "CUDA"}}) {
    if (spec.substr(0, prefix.size()) != prefix) continue;
    int index = 0;
    if (!absl::SimpleAtoi(std::string(spec.substr(prefix.size())), &index) || index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", std::string(spec), "': the ", std::string(what), " device index must be a number >= 0"));
    }
    return prefix == "cuda:" ? cuda::CreateCudaDevice(index, options) : opencl::CreateOpenClDevice(index, options);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", std::string(spec), "' is not a device (drivers: cpu, opencl, opencl:<n>, cuda, cuda:<n>)"));
}

std::vector<std::string> DescribeDrivers() {
  std::vector<std::string> out = {"cpu: available"};
  absl::StatusOr<std::vector<std::string>> opencl = opencl::ListOpenClDevices();
  if (!opencl.ok()) {
    out.push_back(absl::StrCat("opencl: unavailable (", opencl.status().message(), ")"));
  } else {
    for (size_t i = 0; i < opencl->size(); ++i) out.push_back(absl::StrCat("opencl:", i, ": ", (*opencl)[i]));
  }
  absl::StatusOr<std::vector<std::string>> cuda = cuda::ListCudaDevices();
  if (!cuda.ok()) {
    out.push_back(absl::StrCat("cuda: unavailable (", cuda.status().message(), ")"));
  } else {
    for (size_t i = 0; i < cuda->size(); ++i) out.push_back(absl::StrCat("cuda:", i, ": ", (*cuda)[i]));
  }
  return out;
}

}  // namespace gpt_sft::runtime::device
