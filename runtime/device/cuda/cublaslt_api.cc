// Implements CublasLtApi::Get (DynamicLibrary: dlopen + dlsym) and CublasStatusName.
#include "runtime/device/cuda/cublaslt_api.h"

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/dynamic_library.h"
#include "absl/strings/str_join.h"

namespace gpt_sft::runtime::device::cuda {
namespace {

absl::StatusOr<CublasLtApi> Load() {
  std::vector<std::string> candidates = {"libcublasLt.so.13", "libcublasLt.so.12"};
  if (const char* env = std::getenv("GPT_SFT_LIBCUBLASLT"); env != nullptr && env[0] != '\0') candidates = {env};
  absl::StatusOr<base::DynamicLibrary> lib = absl::NotFoundError("no candidate");
  std::vector<std::string> errors;
  for (const std::string& name : candidates) {
    if ((lib = base::DynamicLibrary::Open(name)).ok()) break;
    errors.emplace_back(lib.status().message());
  }
  if (!lib.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no cuBLASLt: ", absl::StrJoin(errors, "; "),
        " (the step's matmuls call cuBLASLt: install it, set GPT_SFT_LIBCUBLASLT to its path, or compile the step "
        "with the compiler's own gemm: GPT_SFT_CUDA_GEMM=tiled)"));
  }
  CublasLtApi api{};
  lib->Bind(api.Create, "cublasLtCreate");
  lib->Bind(api.Destroy, "cublasLtDestroy");
  lib->Bind(api.GetVersion, "cublasLtGetVersion");
  lib->Bind(api.GetStatusName, "cublasLtGetStatusName");
  lib->Bind(api.MatmulDescCreate, "cublasLtMatmulDescCreate");
  lib->Bind(api.MatmulDescDestroy, "cublasLtMatmulDescDestroy");
  lib->Bind(api.MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  lib->Bind(api.MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  lib->Bind(api.MatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute");
  lib->Bind(api.MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  lib->Bind(api.MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  lib->Bind(api.MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  lib->Bind(api.MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  lib->Bind(api.MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  lib->Bind(api.Matmul, "cublasLtMatmul");
  if (!lib->missing().empty()) return absl::FailedPreconditionError(absl::StrCat("cuBLASLt lacks ", lib->missing()));
  return api;  // the library stays loaded for the process
}

}  // namespace

absl::StatusOr<const CublasLtApi*> CublasLtApi::Get() {
  static const absl::StatusOr<CublasLtApi>* loaded = new absl::StatusOr<CublasLtApi>(Load());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

std::string CublasStatusName(const CublasLtApi& lt, cublasStatus status) {
  const char* name = lt.GetStatusName != nullptr ? lt.GetStatusName(status) : nullptr;
  return name != nullptr ? std::string(name) : absl::StrCat("cuBLAS status ", status);
}

}  // namespace gpt_sft::runtime::device::cuda
