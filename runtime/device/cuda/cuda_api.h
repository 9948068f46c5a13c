// The CUDA driver API entry points the cuda driver calls, reached by dlopen("libcuda.so.1") at
// run time: binaries carry no link-time dependency on CUDA, so they build and start on
// machines without a GPU, and `--device=cuda` there is one clear error.
//
// The few types and constants used are declared here, by hand, as the driver ABI defines them
// (NVIDIA's cuda.h, CUDA 12+; the versioned symbols are the ones cuda.h's macros name), so the
// build needs no toolkit. //runtime/device/cuda:cuda_api_abi_test checks every declaration
// against cuda.h where a toolkit is installed.
#ifndef GPT_SFT_RUNTIME_DEVICE_CUDA_CUDA_API_H_
#define GPT_SFT_RUNTIME_DEVICE_CUDA_CUDA_API_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace gpt_sft::runtime::device::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT: the ABI's type
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUhostFn = void (*)(void* user_data);
using CUjit_option = int;
using CUdevice_attribute = int;
using CUstreamCaptureMode = int;

inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorNotReady = 600;  // cuStreamQuery: work still pending
inline constexpr CUdevice_attribute kAttrMaxThreadsPerBlock = 1;
inline constexpr CUdevice_attribute kAttrMaxBlockDimX = 2;  // Y = 3, Z = 4
inline constexpr CUdevice_attribute kAttrMaxSharedMemoryPerBlock = 8;
inline constexpr CUdevice_attribute kAttrMultiprocessorCount = 16;
inline constexpr CUdevice_attribute kAttrComputeCapabilityMajor = 75;
inline constexpr CUdevice_attribute kAttrComputeCapabilityMinor = 76;
inline constexpr CUjit_option kJitErrorLogBuffer = 5;
inline constexpr CUjit_option kJitErrorLogBufferSizeBytes = 6;
inline constexpr unsigned int kStreamNonBlocking = 1;
inline constexpr CUstreamCaptureMode kCaptureModeThreadLocal = 1;
inline constexpr unsigned int kEventDefault = 0;

struct CudaApi {
  CUresult (*Init)(unsigned int flags);
  CUresult (*DriverGetVersion)(int* version);
  CUresult (*DeviceGetCount)(int* count);
  CUresult (*DeviceGet)(CUdevice* device, int ordinal);
  CUresult (*DeviceGetName)(char* name, int len, CUdevice device);
  CUresult (*DeviceTotalMem)(size_t* bytes, CUdevice device);                              // _v2
  CUresult (*DeviceGetAttribute)(int* value, CUdevice_attribute attribute, CUdevice device);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice device);                                    // _v2
  CUresult (*CtxSetCurrent)(CUcontext context);
  CUresult (*MemAlloc)(CUdeviceptr* ptr, size_t bytes);                                   // _v2
  CUresult (*MemFree)(CUdeviceptr ptr);                                                   // _v2
  CUresult (*MemGetInfo)(size_t* free, size_t* total);                                    // _v2
  CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes);                 // _v2
  CUresult (*MemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes);                       // _v2
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);  // _v2
  CUresult (*MemsetD32Async)(CUdeviceptr dst, unsigned int value, size_t words, CUstream s);
  CUresult (*ModuleLoadDataEx)(CUmodule* module, const void* image, unsigned int num_options, CUjit_option* options,
                               void** values);
  CUresult (*ModuleUnload)(CUmodule module);
  CUresult (*ModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*LaunchKernel)(CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                           unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared_bytes,
                           CUstream stream, void** params, void** extra);
  CUresult (*LaunchHostFunc)(CUstream stream, CUhostFn fn, void* user_data);
  CUresult (*StreamCreate)(CUstream* stream, unsigned int flags);
  CUresult (*StreamDestroy)(CUstream stream);                                             // _v2
  CUresult (*StreamSynchronize)(CUstream stream);
  CUresult (*StreamQuery)(CUstream stream);
  CUresult (*StreamBeginCapture)(CUstream stream, CUstreamCaptureMode mode);              // _v2
  CUresult (*StreamEndCapture)(CUstream stream, CUgraph* graph);
  CUresult (*GraphInstantiate)(CUgraphExec* exec, CUgraph graph, unsigned long long flags);  // NOLINT: WithFlags
  CUresult (*GraphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*GraphDestroy)(CUgraph graph);
  CUresult (*GraphExecDestroy)(CUgraphExec exec);
  CUresult (*EventCreate)(CUevent* event, unsigned int flags);
  CUresult (*EventDestroy)(CUevent event);                                                // _v2
  CUresult (*EventRecord)(CUevent event, CUstream stream);
  CUresult (*EventSynchronize)(CUevent event);
  CUresult (*EventElapsedTime)(float* milliseconds, CUevent start, CUevent end);
  CUresult (*GetErrorName)(CUresult error, const char** name);

  /// The table, loaded once per process; FailedPrecondition saying that there is no NVIDIA
  /// driver (libcuda.so.1) or which symbol it lacks.
  static absl::StatusOr<const CudaApi*> Get();
};

/// "CUDA_ERROR_OUT_OF_MEMORY", ... ("CUDA error 2" where the driver has no name for it).
std::string CuErrorName(const CudaApi& cu, CUresult code);

}  // namespace gpt_sft::runtime::device::cuda

#endif  // GPT_SFT_RUNTIME_DEVICE_CUDA_CUDA_API_H_
