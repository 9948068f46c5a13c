// Implements CudaApi::Get (DynamicLibrary: dlopen + dlsym of every entry point, by the versioned names the
// driver exports) and CuErrorName.
#include "runtime/device/cuda/cuda_api.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/dynamic_library.h"

namespace gpt_sft::runtime::device::cuda {
namespace {

absl::StatusOr<CudaApi> Load() {
  // The environment can name another library (a test points it at a stand-in).
  const char* env = std::getenv("GPT_SFT_LIBCUDA");
  const std::string library = env != nullptr && env[0] != '\0' ? env : "libcuda.so.1";
  absl::StatusOr<base::DynamicLibrary> lib = base::DynamicLibrary::Open(library);
  if (!lib.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no NVIDIA driver: ", library, " cannot be loaded (", lib.status().message(),
        "); --device=cuda needs an NVIDIA GPU with its driver installed"));
  }
  CudaApi api{};
  lib->Bind(api.Init, "cuInit");
  lib->Bind(api.DriverGetVersion, "cuDriverGetVersion");
  lib->Bind(api.DeviceGetCount, "cuDeviceGetCount");
  lib->Bind(api.DeviceGet, "cuDeviceGet");
  lib->Bind(api.DeviceGetName, "cuDeviceGetName");
  lib->Bind(api.DeviceTotalMem, "cuDeviceTotalMem_v2");
  lib->Bind(api.DeviceGetAttribute, "cuDeviceGetAttribute");
  lib->Bind(api.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  lib->Bind(api.DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  lib->Bind(api.CtxSetCurrent, "cuCtxSetCurrent");
  lib->Bind(api.MemAlloc, "cuMemAlloc_v2");
  lib->Bind(api.MemFree, "cuMemFree_v2");
  lib->Bind(api.MemGetInfo, "cuMemGetInfo_v2");
  lib->Bind(api.MemcpyHtoD, "cuMemcpyHtoD_v2");
  lib->Bind(api.MemcpyDtoH, "cuMemcpyDtoH_v2");
  lib->Bind(api.MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  lib->Bind(api.MemsetD32Async, "cuMemsetD32Async");
  lib->Bind(api.ModuleLoadDataEx, "cuModuleLoadDataEx");
  lib->Bind(api.ModuleUnload, "cuModuleUnload");
  lib->Bind(api.ModuleGetFunction, "cuModuleGetFunction");
  lib->Bind(api.LaunchKernel, "cuLaunchKernel");
  lib->Bind(api.LaunchHostFunc, "cuLaunchHostFunc");
  lib->Bind(api.StreamCreate, "cuStreamCreate");
  lib->Bind(api.StreamDestroy, "cuStreamDestroy_v2");
  lib->Bind(api.StreamSynchronize, "cuStreamSynchronize");
  lib->Bind(api.StreamQuery, "cuStreamQuery");
  lib->Bind(api.StreamBeginCapture, "cuStreamBeginCapture_v2");
  lib->Bind(api.StreamEndCapture, "cuStreamEndCapture");
  lib->Bind(api.GraphInstantiate, "cuGraphInstantiateWithFlags");
  lib->Bind(api.GraphLaunch, "cuGraphLaunch");
  lib->Bind(api.GraphDestroy, "cuGraphDestroy");
  lib->Bind(api.GraphExecDestroy, "cuGraphExecDestroy");
  lib->Bind(api.EventCreate, "cuEventCreate");
  lib->Bind(api.EventDestroy, "cuEventDestroy_v2");
  lib->Bind(api.EventRecord, "cuEventRecord");
  lib->Bind(api.EventSynchronize, "cuEventSynchronize");
  lib->Bind(api.EventElapsedTime, "cuEventElapsedTime");
  lib->Bind(api.GetErrorName, "cuGetErrorName");
  if (!lib->missing().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(library, " lacks ", lib->missing(), " (the cuda driver needs an NVIDIA driver for CUDA 12 or later)"));
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
