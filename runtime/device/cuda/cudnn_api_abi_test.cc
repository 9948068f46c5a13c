// cudnn_api.h declares cuDNN's ABI by hand; this test holds its constants and entry points to
// the installed cudnn_graph.h where there is one (a mismatch does not compile), and says so
// where there is none. The missing library is one clear error naming --attention.
#include "runtime/device/cuda/cudnn_api.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

#if defined(GPT_HAVE_CUDA_H) && __has_include(<cudnn_graph.h>)
#include <cudnn_graph.h>

#include <type_traits>

namespace gpt_sft::runtime::device::cuda {
namespace {

static_assert(CUDNN_MAJOR == 9, "the sdpa builtins are written against cuDNN 9's graph API");
static_assert(kCudnnSuccess == CUDNN_STATUS_SUCCESS && kCudnnNotSupported == CUDNN_STATUS_NOT_SUPPORTED);
static_assert(sizeof(cudnnStatus) == sizeof(cudnnStatus_t));
static_assert(std::is_same_v<cudnnHandle, cudnnHandle_t> && std::is_same_v<cudnnDescriptor, cudnnBackendDescriptor_t>);
// Every enum the table passes as int is an int.
static_assert(sizeof(int) == sizeof(cudnnBackendDescriptorType_t) && sizeof(int) == sizeof(cudnnBackendAttributeName_t) &&
              sizeof(int) == sizeof(cudnnBackendAttributeType_t) && sizeof(int) == sizeof(cudnnDataType_t) &&
              sizeof(int) == sizeof(cudnnPointwiseMode_t) && sizeof(int) == sizeof(cudnnReduceTensorOp_t) &&
              sizeof(int) == sizeof(cudnnBackendHeurMode_t));

static_assert(cudnn_desc::kPointwise == CUDNN_BACKEND_POINTWISE_DESCRIPTOR &&
              cudnn_desc::kEngineCfg == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR &&
              cudnn_desc::kEngineHeur == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR &&
              cudnn_desc::kExecutionPlan == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR &&
              cudnn_desc::kOperationPointwise == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR &&
              cudnn_desc::kOperationGraph == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR &&
              cudnn_desc::kVariantPack == CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR &&
              cudnn_desc::kTensor == CUDNN_BACKEND_TENSOR_DESCRIPTOR &&
              cudnn_desc::kMatmul == CUDNN_BACKEND_MATMUL_DESCRIPTOR &&
              cudnn_desc::kOperationMatmul == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR &&
              cudnn_desc::kReduction == CUDNN_BACKEND_REDUCTION_DESCRIPTOR &&
              cudnn_desc::kOperationReduction == CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR &&
              cudnn_desc::kOperationReshape == CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);

static_assert(cudnn_type::kHandle == CUDNN_TYPE_HANDLE && cudnn_type::kDataType == CUDNN_TYPE_DATA_TYPE && cudnn_type::kBoolean == CUDNN_TYPE_BOOLEAN &&
              cudnn_type::kInt64 == CUDNN_TYPE_INT64 && cudnn_type::kFloat == CUDNN_TYPE_FLOAT &&
              cudnn_type::kDouble == CUDNN_TYPE_DOUBLE && cudnn_type::kVoidPtr == CUDNN_TYPE_VOID_PTR &&
              cudnn_type::kHeurMode == CUDNN_TYPE_HEUR_MODE && cudnn_type::kPointwiseMode == CUDNN_TYPE_POINTWISE_MODE &&
              cudnn_type::kBackendDescriptor == CUDNN_TYPE_BACKEND_DESCRIPTOR &&
              cudnn_type::kReductionOperator == CUDNN_TYPE_REDUCTION_OPERATOR_TYPE);

static_assert(cudnn_attr::kPointwiseMode == CUDNN_ATTR_POINTWISE_MODE &&
              cudnn_attr::kPointwiseMathPrec == CUDNN_ATTR_POINTWISE_MATH_PREC &&
              cudnn_attr::kPointwiseAxis == CUDNN_ATTR_POINTWISE_AXIS);
static_assert(cudnn_attr::kEngineHeurMode == CUDNN_ATTR_ENGINEHEUR_MODE &&
              cudnn_attr::kEngineHeurOperationGraph == CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH &&
              cudnn_attr::kEngineHeurResults == CUDNN_ATTR_ENGINEHEUR_RESULTS);
static_assert(cudnn_attr::kPlanHandle == 400 && cudnn_attr::kPlanEngineConfig == CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG &&
              cudnn_attr::kPlanWorkspaceSize == CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
static_assert(cudnn_attr::kOpPointwiseDescriptor == CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR &&
              cudnn_attr::kOpPointwiseX == CUDNN_ATTR_OPERATION_POINTWISE_XDESC &&
              cudnn_attr::kOpPointwiseB == CUDNN_ATTR_OPERATION_POINTWISE_BDESC &&
              cudnn_attr::kOpPointwiseY == CUDNN_ATTR_OPERATION_POINTWISE_YDESC &&
              cudnn_attr::kOpPointwiseT == CUDNN_ATTR_OPERATION_POINTWISE_TDESC);
static_assert(cudnn_attr::kGraphHandle == 800 && cudnn_attr::kGraphOps == CUDNN_ATTR_OPERATIONGRAPH_OPS);
static_assert(cudnn_attr::kTensorByteAlignment == CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT &&
              cudnn_attr::kTensorDataType == CUDNN_ATTR_TENSOR_DATA_TYPE &&
              cudnn_attr::kTensorDimensions == CUDNN_ATTR_TENSOR_DIMENSIONS &&
              cudnn_attr::kTensorStrides == CUDNN_ATTR_TENSOR_STRIDES &&
              cudnn_attr::kTensorUniqueId == CUDNN_ATTR_TENSOR_UNIQUE_ID &&
              cudnn_attr::kTensorIsVirtual == CUDNN_ATTR_TENSOR_IS_VIRTUAL &&
              cudnn_attr::kTensorIsByValue == CUDNN_ATTR_TENSOR_IS_BY_VALUE);
static_assert(cudnn_attr::kVariantPackUniqueIds == CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS &&
              cudnn_attr::kVariantPackDataPointers == CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS &&
              cudnn_attr::kVariantPackWorkspace == CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
static_assert(cudnn_attr::kMatmulCompType == CUDNN_ATTR_MATMUL_COMP_TYPE &&
              cudnn_attr::kOpMatmulA == CUDNN_ATTR_OPERATION_MATMUL_ADESC &&
              cudnn_attr::kOpMatmulB == CUDNN_ATTR_OPERATION_MATMUL_BDESC &&
              cudnn_attr::kOpMatmulC == CUDNN_ATTR_OPERATION_MATMUL_CDESC &&
              cudnn_attr::kOpMatmulDescriptor == CUDNN_ATTR_OPERATION_MATMUL_DESC);
static_assert(cudnn_attr::kReductionOperator == CUDNN_ATTR_REDUCTION_OPERATOR &&
              cudnn_attr::kReductionCompType == CUDNN_ATTR_REDUCTION_COMP_TYPE &&
              cudnn_attr::kOpReductionX == CUDNN_ATTR_OPERATION_REDUCTION_XDESC &&
              cudnn_attr::kOpReductionY == CUDNN_ATTR_OPERATION_REDUCTION_YDESC &&
              cudnn_attr::kOpReductionDescriptor == CUDNN_ATTR_OPERATION_REDUCTION_DESC);
static_assert(cudnn_attr::kOpReshapeX == CUDNN_ATTR_OPERATION_RESHAPE_XDESC &&
              cudnn_attr::kOpReshapeY == CUDNN_ATTR_OPERATION_RESHAPE_YDESC);

static_assert(kCudnnDataFloat == CUDNN_DATA_FLOAT && kCudnnDataInt32 == CUDNN_DATA_INT32 && kCudnnDataBf16 == CUDNN_DATA_BFLOAT16 &&
              kCudnnDataInt64 == CUDNN_DATA_INT64 && kCudnnDataBoolean == CUDNN_DATA_BOOLEAN);
static_assert(cudnn_pointwise::kAdd == CUDNN_POINTWISE_ADD && cudnn_pointwise::kMul == CUDNN_POINTWISE_MUL &&
              cudnn_pointwise::kDiv == CUDNN_POINTWISE_DIV && cudnn_pointwise::kSub == CUDNN_POINTWISE_SUB &&
              cudnn_pointwise::kExp == CUDNN_POINTWISE_EXP && cudnn_pointwise::kLog == CUDNN_POINTWISE_LOG &&
              cudnn_pointwise::kIdentity == CUDNN_POINTWISE_IDENTITY && cudnn_pointwise::kCmpGe == CUDNN_POINTWISE_CMP_GE &&
              cudnn_pointwise::kGenIndex == CUDNN_POINTWISE_GEN_INDEX &&
              cudnn_pointwise::kBinarySelect == CUDNN_POINTWISE_BINARY_SELECT);
static_assert(kCudnnReduceAdd == CUDNN_REDUCE_TENSOR_ADD && kCudnnReduceMax == CUDNN_REDUCE_TENSOR_MAX);
static_assert(kCudnnHeurModeA == CUDNN_HEUR_MODE_A);

// Each entry point: the same parameters, enums passed as int (checked above to be ints).
template <typename R, typename... A>
constexpr size_t Arity(R (*)(A...)) {
  return sizeof...(A);
}
template <typename R, typename... A>
constexpr bool ReturnsStatus(R (*)(A...)) {
  return sizeof(R) == sizeof(cudnnStatus_t);
}
static_assert(std::is_same_v<decltype(CudnnApi{}.GetVersion), decltype(&::cudnnGetVersion)>);
static_assert(Arity(CudnnApi{}.GetErrorString) == Arity(&::cudnnGetErrorString));
static_assert(std::is_same_v<decltype(CudnnApi{}.Create), cudnnStatus (*)(cudnnHandle_t*)> &&
              Arity(&::cudnnCreate) == 1);
static_assert(Arity(CudnnApi{}.Destroy) == Arity(&::cudnnDestroy));
static_assert(Arity(CudnnApi{}.SetStream) == Arity(&::cudnnSetStream) &&
              sizeof(CUstream) == sizeof(cudaStream_t));
static_assert(Arity(CudnnApi{}.BackendCreateDescriptor) == Arity(&::cudnnBackendCreateDescriptor));
static_assert(Arity(CudnnApi{}.BackendDestroyDescriptor) == Arity(&::cudnnBackendDestroyDescriptor));
static_assert(Arity(CudnnApi{}.BackendFinalize) == Arity(&::cudnnBackendFinalize));
static_assert(Arity(CudnnApi{}.BackendSetAttribute) == Arity(&::cudnnBackendSetAttribute));
static_assert(Arity(CudnnApi{}.BackendGetAttribute) == Arity(&::cudnnBackendGetAttribute));
static_assert(Arity(CudnnApi{}.BackendExecute) == Arity(&::cudnnBackendExecute));
static_assert(ReturnsStatus(&::cudnnBackendSetAttribute) && ReturnsStatus(&::cudnnBackendExecute));

TEST(CudnnApiAbi, MatchesTheInstalledHeader) { SUCCEED() << "checked at compile time against cudnn_graph.h"; }

}  // namespace
}  // namespace gpt_sft::runtime::device::cuda
#else
TEST(CudnnApiAbi, MatchesTheInstalledHeader) { GTEST_SKIP() << "no cuDNN headers: cudnn_graph.h is not installed"; }
#endif

namespace gpt_sft::runtime::device::cuda {
namespace {

// Where the library cannot be found the error says what to do, naming the compile flag.
TEST(CudnnApi, AMissingLibraryIsOneClearError) {
  setenv("GPT_SFT_LIBCUDNN", "/nonexistent/libcudnn.so.99", 1);
  absl::StatusOr<const CudnnApi*> dnn = CudnnApi::Get();
  ASSERT_FALSE(dnn.ok());
  EXPECT_EQ(dnn.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(dnn.status().message()).find("no cuDNN: /nonexistent/libcudnn.so.99"), std::string::npos)
      << dnn.status();
  EXPECT_NE(std::string(dnn.status().message()).find("--attention=generated"), std::string::npos) << dnn.status();
}

}  // namespace
}  // namespace gpt_sft::runtime::device::cuda
