// The cuBLASLt entry points the cuda driver's gemm builtin calls, reached by dlopen at run
// time (like cuda_api.h): no binary links cuBLAS, and a machine without it gets one clear error
// when a step that needs it is loaded. The library is $GPT_SFT_LIBCUBLASLT, else
// libcublasLt.so.13, else libcublasLt.so.12 (CUDA 13's and 12's; NVIDIA's pip wheels and the
// toolkit ship them).
//
// Types and constants are declared by hand as cublasLt.h / cublas_api.h / library_types.h
// define them; //runtime/device/cuda:cublaslt_api_abi_test checks them against those headers
// where a toolkit is installed.
#ifndef GPT_SFT_RUNTIME_DEVICE_CUDA_CUBLASLT_API_H_
#define GPT_SFT_RUNTIME_DEVICE_CUDA_CUBLASLT_API_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/device/cuda/cuda_api.h"

namespace gpt_sft::runtime::device::cuda {

using cublasStatus = int;
using cublasLtHandle = struct cublasLtContext*;
using cublasLtMatmulDesc = struct cublasLtMatmulDescOpaque_t*;
using cublasLtMatrixLayout = struct cublasLtMatrixLayoutOpaque_t*;
using cublasLtMatmulPreference = struct cublasLtMatmulPreferenceOpaque_t*;

/// cublasLtMatmulAlgo_t: opaque, 64 bytes.
struct CublasLtAlgo {
  uint64_t data[8];
};
/// cublasLtMatmulHeuristicResult_t.
struct CublasLtHeuristic {
  CublasLtAlgo algo;
  size_t workspace_bytes;
  cublasStatus state;
  float waves;
  int reserved[4];
};

inline constexpr cublasStatus kCublasSuccess = 0;
inline constexpr int kCudaR32F = 0;                 // cudaDataType CUDA_R_32F
inline constexpr int kCudaR16BF = 14;               // CUDA_R_16BF
inline constexpr int kCublasCompute32F = 68;        // cublasComputeType_t CUBLAS_COMPUTE_32F
inline constexpr int kCublasCompute32FFastTf32 = 77;  // CUBLAS_COMPUTE_32F_FAST_TF32
inline constexpr int32_t kCublasOpN = 0, kCublasOpT = 1;
inline constexpr int kMatmulDescTransA = 3, kMatmulDescTransB = 4;  // cublasLtMatmulDescAttributes_t
// cublasLtMatrixLayoutAttribute_t: matrices per layout (int32) and the elements between them (int64).
inline constexpr int kMatrixLayoutBatchCount = 5, kMatrixLayoutStridedBatchOffset = 6;
inline constexpr int kMatmulPrefMaxWorkspaceBytes = 1;              // cublasLtMatmulPreferenceAttributes_t

struct CublasLtApi {
  cublasStatus (*Create)(cublasLtHandle* handle);
  cublasStatus (*Destroy)(cublasLtHandle handle);
  size_t (*GetVersion)();
  const char* (*GetStatusName)(cublasStatus status);
  cublasStatus (*MatmulDescCreate)(cublasLtMatmulDesc* desc, int compute_type, int scale_type);
  cublasStatus (*MatmulDescDestroy)(cublasLtMatmulDesc desc);
  cublasStatus (*MatmulDescSetAttribute)(cublasLtMatmulDesc desc, int attribute, const void* value, size_t bytes);
  cublasStatus (*MatrixLayoutCreate)(cublasLtMatrixLayout* layout, int type, uint64_t rows, uint64_t cols, int64_t ld);
  cublasStatus (*MatrixLayoutSetAttribute)(cublasLtMatrixLayout layout, int attribute, const void* value, size_t bytes);
  cublasStatus (*MatrixLayoutDestroy)(cublasLtMatrixLayout layout);
  cublasStatus (*MatmulPreferenceCreate)(cublasLtMatmulPreference* preference);
  cublasStatus (*MatmulPreferenceDestroy)(cublasLtMatmulPreference preference);
  cublasStatus (*MatmulPreferenceSetAttribute)(cublasLtMatmulPreference preference, int attribute, const void* value,
                                               size_t bytes);
  cublasStatus (*MatmulAlgoGetHeuristic)(cublasLtHandle handle, cublasLtMatmulDesc desc, cublasLtMatrixLayout a,
                                         cublasLtMatrixLayout b, cublasLtMatrixLayout c, cublasLtMatrixLayout d,
                                         cublasLtMatmulPreference preference, int requested, CublasLtHeuristic* results,
                                         int* returned);
  cublasStatus (*Matmul)(cublasLtHandle handle, cublasLtMatmulDesc desc, const void* alpha, const void* a,
                         cublasLtMatrixLayout a_layout, const void* b, cublasLtMatrixLayout b_layout, const void* beta,
                         const void* c, cublasLtMatrixLayout c_layout, void* d, cublasLtMatrixLayout d_layout,
                         const CublasLtAlgo* algo, void* workspace, size_t workspace_bytes, CUstream stream);

  /// The table, loaded once per process; FailedPrecondition naming the libraries tried.
  static absl::StatusOr<const CublasLtApi*> Get();
};

/// "CUBLAS_STATUS_NOT_SUPPORTED", ... ("cuBLAS status 15" where the library has no name).
std::string CublasStatusName(const CublasLtApi& lt, cublasStatus status);

}  // namespace gpt_sft::runtime::device::cuda

#endif  // GPT_SFT_RUNTIME_DEVICE_CUDA_CUBLASLT_API_H_
