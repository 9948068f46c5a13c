// The OpenCL entry points the opencl driver calls, reached through the ocl-icd loader by
// dlopen("libOpenCL.so.1") at run time: binaries carry no link-time dependency on OpenCL, so
// they start on machines without it and `--device=opencl` there is one clear error.
#ifndef GPT_SFT_RUNTIME_DEVICE_OPENCL_OPENCL_API_H_
#define GPT_SFT_RUNTIME_DEVICE_OPENCL_OPENCL_API_H_

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <string>

#include "absl/status/statusor.h"

namespace gpt_sft::runtime::device::opencl {

struct OpenClApi {
  decltype(&::clGetPlatformIDs) GetPlatformIDs;
  decltype(&::clGetPlatformInfo) GetPlatformInfo;
  decltype(&::clGetDeviceIDs) GetDeviceIDs;
  decltype(&::clGetDeviceInfo) GetDeviceInfo;
  decltype(&::clCreateContext) CreateContext;
  decltype(&::clReleaseContext) ReleaseContext;
  decltype(&::clCreateCommandQueueWithProperties) CreateCommandQueueWithProperties;
  decltype(&::clReleaseCommandQueue) ReleaseCommandQueue;
  decltype(&::clCreateBuffer) CreateBuffer;
  decltype(&::clCreateSubBuffer) CreateSubBuffer;
  decltype(&::clReleaseMemObject) ReleaseMemObject;
  decltype(&::clEnqueueWriteBuffer) EnqueueWriteBuffer;
  decltype(&::clEnqueueReadBuffer) EnqueueReadBuffer;
  decltype(&::clEnqueueCopyBuffer) EnqueueCopyBuffer;
  decltype(&::clEnqueueFillBuffer) EnqueueFillBuffer;
  decltype(&::clCreateProgramWithBinary) CreateProgramWithBinary;
  decltype(&::clBuildProgram) BuildProgram;
  decltype(&::clGetProgramBuildInfo) GetProgramBuildInfo;
  decltype(&::clReleaseProgram) ReleaseProgram;
  decltype(&::clCreateKernel) CreateKernel;
  decltype(&::clReleaseKernel) ReleaseKernel;
  decltype(&::clSetKernelArg) SetKernelArg;
  decltype(&::clEnqueueNDRangeKernel) EnqueueNDRangeKernel;
  decltype(&::clEnqueueMarkerWithWaitList) EnqueueMarkerWithWaitList;
  decltype(&::clGetEventProfilingInfo) GetEventProfilingInfo;
  decltype(&::clWaitForEvents) WaitForEvents;
  decltype(&::clReleaseEvent) ReleaseEvent;
  decltype(&::clFinish) Finish;

  /// The table, loaded once per process; FailedPrecondition naming the library (and the
  /// Debian package that has it) when the loader or one of its symbols is missing.
  static absl::StatusOr<const OpenClApi*> Get();
};

/// "CL_OUT_OF_RESOURCES", ... ("CL error -5" for codes it does not know).
std::string ClErrorName(cl_int code);

}  // namespace gpt_sft::runtime::device::opencl

#endif  // GPT_SFT_RUNTIME_DEVICE_OPENCL_OPENCL_API_H_
