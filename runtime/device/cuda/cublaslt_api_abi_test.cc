// cublaslt_api.h declares cuBLASLt's ABI by hand; this test holds its constants, structs and
// entry points to the toolkit's cublasLt.h where one is installed (a mismatch does not
// compile), and says so where none is.
#include "runtime/device/cuda/cublaslt_api.h"

#include "gtest/gtest.h"

#ifdef GPT_HAVE_CUDA_H
#include <cublasLt.h>

#include <cstddef>

namespace gpt_sft::runtime::device::cuda {
namespace {

static_assert(kCublasSuccess == CUBLAS_STATUS_SUCCESS);
static_assert(kCudaR32F == CUDA_R_32F && kCudaR16BF == CUDA_R_16BF);
static_assert(kCublasCompute32F == CUBLAS_COMPUTE_32F && kCublasCompute32FFastTf32 == CUBLAS_COMPUTE_32F_FAST_TF32);
static_assert(kCublasOpN == CUBLAS_OP_N && kCublasOpT == CUBLAS_OP_T);
static_assert(kMatmulDescTransA == CUBLASLT_MATMUL_DESC_TRANSA && kMatmulDescTransB == CUBLASLT_MATMUL_DESC_TRANSB);
static_assert(kMatmulPrefMaxWorkspaceBytes == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(sizeof(CublasLtAlgo) == sizeof(cublasLtMatmulAlgo_t));
static_assert(sizeof(CublasLtHeuristic) == sizeof(cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(CublasLtHeuristic, workspace_bytes) == offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
static_assert(offsetof(CublasLtHeuristic, state) == offsetof(cublasLtMatmulHeuristicResult_t, state));
static_assert(sizeof(cublasStatus) == sizeof(cublasStatus_t));
static_assert(sizeof(int) == sizeof(cudaDataType) && sizeof(int) == sizeof(cublasComputeType_t));

template <typename R, typename... A>
constexpr size_t Arity(R (*)(A...)) {
  return sizeof...(A);
}
static_assert(Arity(CublasLtApi{}.MatmulDescCreate) == Arity(&::cublasLtMatmulDescCreate));
static_assert(Arity(CublasLtApi{}.MatrixLayoutCreate) == Arity(&::cublasLtMatrixLayoutCreate));
static_assert(Arity(CublasLtApi{}.MatrixLayoutSetAttribute) == Arity(&::cublasLtMatrixLayoutSetAttribute));
static_assert(kMatrixLayoutBatchCount == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT &&
              kMatrixLayoutStridedBatchOffset == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
static_assert(Arity(CublasLtApi{}.MatmulPreferenceSetAttribute) == Arity(&::cublasLtMatmulPreferenceSetAttribute));
static_assert(Arity(CublasLtApi{}.MatmulAlgoGetHeuristic) == Arity(&::cublasLtMatmulAlgoGetHeuristic));
static_assert(Arity(CublasLtApi{}.Matmul) == Arity(&::cublasLtMatmul));

TEST(CublasLtApiAbi, MatchesTheToolkitsHeader) { SUCCEED() << "checked at compile time against cublasLt.h"; }

}  // namespace
}  // namespace gpt_sft::runtime::device::cuda
#else
TEST(CublasLtApiAbi, MatchesTheToolkitsHeader) { GTEST_SKIP() << "no CUDA toolkit: cublasLt.h is not installed"; }
#endif

namespace gpt_sft::runtime::device::cuda {
namespace {

// Where the library cannot be found the error says what to do.
TEST(CublasLtApi, AMissingLibraryIsOneClearError) {
  setenv("GPT_SFT_LIBCUBLASLT", "/nonexistent/libcublasLt.so.99", 1);
  absl::StatusOr<const CublasLtApi*> lt = CublasLtApi::Get();
  ASSERT_FALSE(lt.ok());
  EXPECT_EQ(lt.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(lt.status().message()).find("no cuBLASLt: /nonexistent/libcublasLt.so.99"), std::string::npos)
      << lt.status();
  EXPECT_NE(std::string(lt.status().message()).find("GPT_SFT_CUDA_GEMM=tiled"), std::string::npos) << lt.status();
}

}  // namespace
}  // namespace gpt_sft::runtime::device::cuda
