// cuda_api.h declares the driver ABI by hand; this test holds every constant and entry point
// to the toolkit's cuda.h where one is installed (a mismatch does not compile), and says so
// where none is.
#include "runtime/device/cuda/cuda_api.h"

#include <type_traits>

#include "gtest/gtest.h"

#ifdef GPT_HAVE_CUDA_H
#include <cuda.h>

namespace gpt_sft::runtime::device::cuda {
namespace {

static_assert(kCudaSuccess == CUDA_SUCCESS);
static_assert(kCudaErrorNotReady == CUDA_ERROR_NOT_READY);
static_assert(kAttrMaxThreadsPerBlock == CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
static_assert(kAttrMaxBlockDimX == CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
static_assert(kAttrMaxBlockDimX + 1 == CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
static_assert(kAttrMaxBlockDimX + 2 == CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
static_assert(kAttrMaxSharedMemoryPerBlock == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
static_assert(kAttrMultiprocessorCount == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(kAttrComputeCapabilityMajor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(kAttrComputeCapabilityMinor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(kJitErrorLogBuffer == CU_JIT_ERROR_LOG_BUFFER);
static_assert(kJitErrorLogBufferSizeBytes == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
static_assert(kStreamNonBlocking == CU_STREAM_NON_BLOCKING);
static_assert(kCaptureModeThreadLocal == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
static_assert(kEventDefault == CU_EVENT_DEFAULT);
static_assert(CUDA_ERROR_INVALID_VALUE == 1 && CUDA_ERROR_OUT_OF_MEMORY == 2 && CUDA_ERROR_NOT_INITIALIZED == 3 &&
              CUDA_ERROR_STUB_LIBRARY == 34 && CUDA_ERROR_NO_DEVICE == 100 && CUDA_ERROR_INVALID_PTX == 218 &&
              CUDA_ERROR_UNSUPPORTED_PTX_VERSION == 222 && CUDA_ERROR_UNKNOWN == 999,
              "the fallback names in CuErrorName");
static_assert(std::is_same_v<CUdeviceptr, ::CUdeviceptr>);
static_assert(sizeof(CUresult) == sizeof(::CUresult) && sizeof(CUdevice) == sizeof(::CUdevice));

// The argument lists, written against cuda.h's prototypes (the handles are pointers on both
// sides, the integers the same width), compared by arity and width.
template <typename R, typename... A>
constexpr size_t Arity(R (*)(A...)) {
  return sizeof...(A);
}
static_assert(Arity(CudaApi{}.Init) == Arity(&::cuInit));
static_assert(Arity(CudaApi{}.DeviceGetName) == Arity(&::cuDeviceGetName));
static_assert(Arity(CudaApi{}.DeviceTotalMem) == Arity(&::cuDeviceTotalMem_v2));
static_assert(Arity(CudaApi{}.MemAlloc) == Arity(&::cuMemAlloc_v2));
static_assert(Arity(CudaApi{}.MemcpyHtoD) == Arity(&::cuMemcpyHtoD_v2));
static_assert(Arity(CudaApi{}.MemcpyDtoH) == Arity(&::cuMemcpyDtoH_v2));
static_assert(Arity(CudaApi{}.MemcpyDtoDAsync) == Arity(&::cuMemcpyDtoDAsync_v2));
static_assert(Arity(CudaApi{}.MemsetD32Async) == Arity(&::cuMemsetD32Async));
static_assert(Arity(CudaApi{}.ModuleLoadDataEx) == Arity(&::cuModuleLoadDataEx));
static_assert(Arity(CudaApi{}.LaunchKernel) == Arity(&::cuLaunchKernel));
static_assert(Arity(CudaApi{}.StreamBeginCapture) == Arity(&::cuStreamBeginCapture_v2));
static_assert(Arity(CudaApi{}.GraphInstantiate) == Arity(&::cuGraphInstantiateWithFlags));
static_assert(Arity(CudaApi{}.EventElapsedTime) == Arity(&::cuEventElapsedTime));
static_assert(Arity(CudaApi{}.StreamQuery) == Arity(&::cuStreamQuery));

TEST(CudaApiAbi, MatchesTheToolkitsHeader) { SUCCEED() << "checked at compile time against cuda.h"; }

}  // namespace
}  // namespace gpt_sft::runtime::device::cuda
#else
TEST(CudaApiAbi, MatchesTheToolkitsHeader) { GTEST_SKIP() << "no CUDA toolkit: cuda.h is not installed"; }
#endif
