// Implements CudaApi::Get (dlopen + dlsym of every entry point, by the versioned names the
// driver exports) and CuErrorName.
#include "runtime/device/cuda/cuda_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime::device::cuda {
namespace {

absl::StatusOr<CudaApi> Load() {
  // The environment can name another library (a test points it at a stand-in).
  const char* env = std::getenv("GPT_SFT_LIBCUDA");
  const std::string library = env != nullptr && env[0] != '\0' ? env : "libcuda.so.1";
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no NVIDIA driver: ", library, " cannot be loaded (", dlerror(),
        "); --device=cuda needs an NVIDIA GPU with its driver installed"));
  }
  CudaApi api{};
  std::string missing;
  auto bind = [&](auto& field, const char* name) {
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(dlsym(lib, name));
    if (field == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", name);
  };
  bind(api.Init, "cuInit");
  bind(api.DriverGetVersion, "cuDriverGetVersion");
  bind(api.DeviceGetCount, "cuDeviceGetCount");
  bind(api.DeviceGet, "cuDeviceGet");
  bind(api.DeviceGetName, "cuDeviceGetName");
  bind(api.DeviceTotalMem, "cuDeviceTotalMem_v2");
  bind(api.DeviceGetAttribute, "cuDeviceGetAttribute");
  bind(api.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(api.DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  bind(api.CtxSetCurrent, "cuCtxSetCurrent");
  bind(api.MemAlloc, "cuMemAlloc_v2");
  bind(api.MemFree, "cuMemFree_v2");
  bind(api.MemGetInfo, "cuMemGetInfo_v2");
  bind(api.MemcpyHtoD, "cuMemcpyHtoD_v2");
  bind(api.MemcpyDtoH, "cuMemcpyDtoH_v2");
  bind(api.MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  bind(api.MemsetD32Async, "cuMemsetD32Async");
  bind(api.ModuleLoadDataEx, "cuModuleLoadDataEx");
  bind(api.ModuleUnload, "cuModuleUnload");
  bind(api.ModuleGetFunction, "cuModuleGetFunction");
  bind(api.LaunchKernel, "cuLaunchKernel");
  bind(api.LaunchHostFunc, "cuLaunchHostFunc");
  bind(api.StreamCreate, "cuStreamCreate");
  bind(api.StreamDestroy, "cuStreamDestroy_v2");
  bind(api.StreamSynchronize, "cuStreamSynchronize");
  bind(api.StreamQuery, "cuStreamQuery");
  bind(api.StreamBeginCapture, "cuStreamBeginCapture_v2");
  bind(api.StreamEndCapture, "cuStreamEndCapture");
  bind(api.GraphInstantiate, "cuGraphInstantiateWithFlags");
  bind(api.GraphLaunch, "cuGraphLaunch");
  bind(api.GraphDestroy, "cuGraphDestroy");
  bind(api.GraphExecDestroy, "cuGraphExecDestroy");
  bind(api.EventCreate, "cuEventCreate");
  bind(api.EventDestroy, "cuEventDestroy_v2");
  bind(api.EventRecord, "cuEventRecord");
  bind(api.EventSynchronize, "cuEventSynchronize");
  bind(api.EventElapsedTime, "cuEventElapsedTime");
  bind(api.GetErrorName, "cuGetErrorName");
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(library, " lacks ", missing, " (the cuda driver needs an NVIDIA driver for CUDA 12 or later)"));
  }
  return api;  // the library stays loaded for the process
}

}  // namespace

absl::StatusOr<const CudaApi*> CudaApi::Get() {
  static const absl::StatusOr<CudaApi>* loaded = new absl::StatusOr<CudaApi>(Load());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

std::string CuErrorName(const CudaApi& cu, CUresult code) {
  const char* name = nullptr;
  if (cu.GetErrorName != nullptr && cu.GetErrorName(code, &name) == kCudaSuccess && name != nullptr) return name;
  // The codes a driver that cannot name them (NVIDIA's stub) is most likely to return.
  switch (code) {
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 218: return "CUDA_ERROR_INVALID_PTX";
    case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 999: return "CUDA_ERROR_UNKNOWN";
  }
  return absl::StrCat("CUDA error ", code);
}

}  // namespace gpt_sft::runtime::device::cuda
