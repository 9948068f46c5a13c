// The cuDNN entry points the cuda driver's sdpa builtins call (SDPA_BUILTIN.md), reached by
// dlopen at run time like cublaslt_api.h: no binary links cuDNN, and a machine without it gets
// one clear error when a step that needs it is loaded. The library is $GPT_SFT_LIBCUDNN, else
// libcudnn.so.9 (cuDNN 9: its graph API is the one the fused SDPA engines are reached through).
//
// Only the backend (graph) API is used: descriptors built, attributes set, finalized, an
// execution plan executed with a variant pack. Types and constants are declared by hand as
// cudnn_graph.h defines them; //runtime/device/cuda:cudnn_api_abi_test checks them against
// that header where the library's headers are installed.
#ifndef GPT_SFT_RUNTIME_DEVICE_CUDA_CUDNN_API_H_
#define GPT_SFT_RUNTIME_DEVICE_CUDA_CUDNN_API_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/device/cuda/cuda_api.h"

// cudnn_graph.h's opaque handle, declared where it does (the global namespace), so the
// handle type is cuDNN's own.
struct cudnnContext;

namespace gpt_sft::runtime::device::cuda {

using cudnnStatus = int;
using cudnnHandle = ::cudnnContext*;
using cudnnDescriptor = void*;  // cudnnBackendDescriptor_t

inline constexpr cudnnStatus kCudnnSuccess = 0;
inline constexpr cudnnStatus kCudnnNotSupported = 3000;

/// cudnnBackendDescriptorType_t.
namespace cudnn_desc {
inline constexpr int kPointwise = 0, kEngineCfg = 3, kEngineHeur = 4, kExecutionPlan = 5, kOperationPointwise = 13,
                     kOperationGraph = 15, kVariantPack = 16, kTensor = 17, kMatmul = 18, kOperationMatmul = 19,
                     kReduction = 21, kOperationReduction = 22, kOperationReshape = 31;
}  // namespace cudnn_desc

/// cudnnBackendAttributeType_t.
namespace cudnn_type {
inline constexpr int kHandle = 0, kDataType = 1, kBoolean = 2, kInt64 = 3, kFloat = 4, kDouble = 5, kVoidPtr = 6, kHeurMode = 8,
                     kPointwiseMode = 14, kBackendDescriptor = 15, kReductionOperator = 18;
}  // namespace cudnn_type

/// cudnnBackendAttributeName_t.
namespace cudnn_attr {
inline constexpr int kPointwiseMode = 0, kPointwiseMathPrec = 1, kPointwiseAxis = 9;
inline constexpr int kEngineHeurMode = 200, kEngineHeurOperationGraph = 201, kEngineHeurResults = 202;
inline constexpr int kPlanHandle = 400, kPlanEngineConfig = 401, kPlanWorkspaceSize = 402;
inline constexpr int kOpPointwiseDescriptor = 750, kOpPointwiseX = 751, kOpPointwiseB = 752, kOpPointwiseY = 753,
                     kOpPointwiseT = 758;
inline constexpr int kGraphHandle = 800, kGraphOps = 801;
inline constexpr int kTensorByteAlignment = 900, kTensorDataType = 901, kTensorDimensions = 902,
                     kTensorStrides = 903, kTensorUniqueId = 906, kTensorIsVirtual = 907, kTensorIsByValue = 908;
inline constexpr int kVariantPackUniqueIds = 1000, kVariantPackDataPointers = 1001, kVariantPackWorkspace = 1003;
inline constexpr int kMatmulCompType = 1500;
inline constexpr int kOpMatmulA = 1520, kOpMatmulB = 1521, kOpMatmulC = 1522, kOpMatmulDescriptor = 1523;
inline constexpr int kReductionOperator = 1600, kReductionCompType = 1601;
inline constexpr int kOpReductionX = 1610, kOpReductionY = 1611, kOpReductionDescriptor = 1612;
inline constexpr int kOpReshapeX = 2200, kOpReshapeY = 2201;
}  // namespace cudnn_attr

/// cudnnDataType_t, cudnnPointwiseMode_t, cudnnReduceTensorOp_t, cudnnBackendHeurMode_t.
inline constexpr int kCudnnDataFloat = 0, kCudnnDataInt32 = 4, kCudnnDataBf16 = 9, kCudnnDataInt64 = 10, kCudnnDataBoolean = 11;
namespace cudnn_pointwise {
inline constexpr int kAdd = 0, kMul = 1, kDiv = 6, kSub = 9, kExp = 13, kLog = 15, kIdentity = 21, kCmpGe = 303,
                     kGenIndex = 501, kBinarySelect = 601;
}  // namespace cudnn_pointwise
inline constexpr int kCudnnReduceAdd = 0, kCudnnReduceMax = 3;
inline constexpr int kCudnnHeurModeA = 3;

struct CudnnApi {
  size_t (*GetVersion)();
  const char* (*GetErrorString)(cudnnStatus status);
  cudnnStatus (*Create)(cudnnHandle* handle);
  cudnnStatus (*Destroy)(cudnnHandle handle);
  cudnnStatus (*SetStream)(cudnnHandle handle, CUstream stream);
  cudnnStatus (*BackendCreateDescriptor)(int type, cudnnDescriptor* descriptor);
  cudnnStatus (*BackendDestroyDescriptor)(cudnnDescriptor descriptor);
  cudnnStatus (*BackendFinalize)(cudnnDescriptor descriptor);
  cudnnStatus (*BackendSetAttribute)(cudnnDescriptor descriptor, int name, int type, int64_t count,
                                     const void* elements);
  cudnnStatus (*BackendGetAttribute)(cudnnDescriptor descriptor, int name, int type, int64_t requested,
                                     int64_t* returned, void* elements);
  cudnnStatus (*BackendExecute)(cudnnHandle handle, cudnnDescriptor plan, cudnnDescriptor variant_pack);

  /// The table, loaded once per process; FailedPrecondition naming the libraries tried and
  /// the way out (compiling the step with --attention=generated).
  static absl::StatusOr<const CudnnApi*> Get();
};

/// "CUDNN_STATUS_NOT_SUPPORTED", ... ("cuDNN status 3000" where the library has no name).
std::string CudnnStatusName(const CudnnApi& dnn, cudnnStatus status);

}  // namespace gpt_sft::runtime::device::cuda

#endif  // GPT_SFT_RUNTIME_DEVICE_CUDA_CUDNN_API_H_
