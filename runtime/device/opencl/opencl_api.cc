// Implements OpenClApi::Get (dlopen + dlsym of every entry point) and ClErrorName.
#include "runtime/device/opencl/opencl_api.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime::device::opencl {
namespace {

absl::StatusOr<OpenClApi> Load() {
  void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return absl::FailedPreconditionError(
        "the OpenCL ICD loader libOpenCL.so.1 is not installed (Debian package ocl-icd-libopencl1; an ICD such as "
        "pocl-opencl-icd or a GPU driver provides the devices)");
  }
  OpenClApi api{};
  std::string missing;
  auto bind = [&](auto& field, const char* name) {
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(dlsym(lib, name));
    if (field == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", name);
  };
  bind(api.GetPlatformIDs, "clGetPlatformIDs");
  bind(api.GetPlatformInfo, "clGetPlatformInfo");
  bind(api.GetDeviceIDs, "clGetDeviceIDs");
  bind(api.GetDeviceInfo, "clGetDeviceInfo");
  bind(api.CreateContext, "clCreateContext");
  bind(api.ReleaseContext, "clReleaseContext");
  bind(api.CreateCommandQueueWithProperties, "clCreateCommandQueueWithProperties");
  bind(api.ReleaseCommandQueue, "clReleaseCommandQueue");
  bind(api.CreateBuffer, "clCreateBuffer");
  bind(api.CreateSubBuffer, "clCreateSubBuffer");
  bind(api.ReleaseMemObject, "clReleaseMemObject");
  bind(api.EnqueueWriteBuffer, "clEnqueueWriteBuffer");
  bind(api.EnqueueReadBuffer, "clEnqueueReadBuffer");
  bind(api.EnqueueCopyBuffer, "clEnqueueCopyBuffer");
  bind(api.EnqueueFillBuffer, "clEnqueueFillBuffer");
  bind(api.CreateProgramWithBinary, "clCreateProgramWithBinary");
  bind(api.BuildProgram, "clBuildProgram");
  bind(api.GetProgramBuildInfo, "clGetProgramBuildInfo");
  bind(api.ReleaseProgram, "clReleaseProgram");
  bind(api.CreateKernel, "clCreateKernel");
  bind(api.ReleaseKernel, "clReleaseKernel");
  bind(api.SetKernelArg, "clSetKernelArg");
  bind(api.EnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
  bind(api.EnqueueMarkerWithWaitList, "clEnqueueMarkerWithWaitList");
  bind(api.GetEventProfilingInfo, "clGetEventProfilingInfo");
  bind(api.WaitForEvents, "clWaitForEvents");
  bind(api.ReleaseEvent, "clReleaseEvent");
  bind(api.Finish, "clFinish");
  if (!missing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("libOpenCL.so.1 lacks ", missing, " (an OpenCL 2.0+ loader is needed)"));
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
