// Implements OpenClApi::Get (DynamicLibrary: dlopen + dlsym of every entry point) and ClErrorName.
#include "runtime/device/opencl/opencl_api.h"

#include "absl/strings/str_cat.h"
#include "base/dynamic_library.h"

namespace gpt_sft::runtime::device::opencl {
namespace {

absl::StatusOr<OpenClApi> Load() {
  absl::StatusOr<base::DynamicLibrary> lib = base::DynamicLibrary::Open("libOpenCL.so.1");
  if (!lib.ok()) {
    return absl::FailedPreconditionError(
        "the OpenCL ICD loader libOpenCL.so.1 is not installed (Debian package ocl-icd-libopencl1; an ICD such as "
        "pocl-opencl-icd or a GPU driver provides the devices)");
  }
  OpenClApi api{};
  lib->Bind(api.GetPlatformIDs, "clGetPlatformIDs");
  lib->Bind(api.GetPlatformInfo, "clGetPlatformInfo");
  lib->Bind(api.GetDeviceIDs, "clGetDeviceIDs");
  lib->Bind(api.GetDeviceInfo, "clGetDeviceInfo");
  lib->Bind(api.CreateContext, "clCreateContext");
  lib->Bind(api.ReleaseContext, "clReleaseContext");
  lib->Bind(api.CreateCommandQueueWithProperties, "clCreateCommandQueueWithProperties");
  lib->Bind(api.ReleaseCommandQueue, "clReleaseCommandQueue");
  lib->Bind(api.CreateBuffer, "clCreateBuffer");
  lib->Bind(api.CreateSubBuffer, "clCreateSubBuffer");
  lib->Bind(api.ReleaseMemObject, "clReleaseMemObject");
  lib->Bind(api.EnqueueWriteBuffer, "clEnqueueWriteBuffer");
  lib->Bind(api.EnqueueReadBuffer, "clEnqueueReadBuffer");
  lib->Bind(api.EnqueueCopyBuffer, "clEnqueueCopyBuffer");
  lib->Bind(api.EnqueueFillBuffer, "clEnqueueFillBuffer");
  lib->Bind(api.CreateProgramWithBinary, "clCreateProgramWithBinary");
  lib->Bind(api.BuildProgram, "clBuildProgram");
  lib->Bind(api.GetProgramBuildInfo, "clGetProgramBuildInfo");
  lib->Bind(api.ReleaseProgram, "clReleaseProgram");
  lib->Bind(api.CreateKernel, "clCreateKernel");
  lib->Bind(api.ReleaseKernel, "clReleaseKernel");
  lib->Bind(api.SetKernelArg, "clSetKernelArg");
  lib->Bind(api.EnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
  lib->Bind(api.EnqueueMarkerWithWaitList, "clEnqueueMarkerWithWaitList");
  lib->Bind(api.GetEventProfilingInfo, "clGetEventProfilingInfo");
  lib->Bind(api.WaitForEvents, "clWaitForEvents");
  lib->Bind(api.ReleaseEvent, "clReleaseEvent");
  lib->Bind(api.Finish, "clFinish");
  if (!lib->missing().empty()) {
    return absl::FailedPreconditionError(absl::StrCat("libOpenCL.so.1 lacks ", lib->missing(), " (an OpenCL 2.0+ loader is needed)"));
  }
  return api;  // the library stays loaded for the process
}

}  // namespace

absl::StatusOr<const OpenClApi*> OpenClApi::Get() {
  static const absl::StatusOr<OpenClApi>* api = new absl::StatusOr<OpenClApi>(Load());
  if (!api->ok()) return api->status();
  return &**api;
}

std::string ClErrorName(cl_int code) {
  switch (code) {
#define GPT_CL_ERROR(name) \
  case name:               \
    return #name;
    GPT_CL_ERROR(CL_SUCCESS)
    GPT_CL_ERROR(CL_DEVICE_NOT_FOUND)
    GPT_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    GPT_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    GPT_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    GPT_CL_ERROR(CL_OUT_OF_RESOURCES)
    GPT_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    GPT_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    GPT_CL_ERROR(CL_MEM_COPY_OVERLAP)
    GPT_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    GPT_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    GPT_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    GPT_CL_ERROR(CL_INVALID_VALUE)
    GPT_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    GPT_CL_ERROR(CL_INVALID_PLATFORM)
    GPT_CL_ERROR(CL_INVALID_DEVICE)
    GPT_CL_ERROR(CL_INVALID_CONTEXT)
    GPT_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    GPT_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    GPT_CL_ERROR(CL_INVALID_MEM_OBJECT)
    GPT_CL_ERROR(CL_INVALID_BINARY)
    GPT_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    GPT_CL_ERROR(CL_INVALID_PROGRAM)
    GPT_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    GPT_CL_ERROR(CL_INVALID_KERNEL_NAME)
    GPT_CL_ERROR(CL_INVALID_KERNEL)
    GPT_CL_ERROR(CL_INVALID_ARG_INDEX)
    GPT_CL_ERROR(CL_INVALID_ARG_VALUE)
    GPT_CL_ERROR(CL_INVALID_ARG_SIZE)
    GPT_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    GPT_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    GPT_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    GPT_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    GPT_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    GPT_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    GPT_CL_ERROR(CL_INVALID_EVENT)
    GPT_CL_ERROR(CL_INVALID_OPERATION)
    GPT_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    GPT_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
#undef GPT_CL_ERROR
  }
  return absl::StrCat("CL error ", code);
}

}  // namespace gpt_sft::runtime::device::opencl
