// Implements CublasLtApi::Get (dlopen + dlsym) and CublasStatusName.
#include "runtime/device/cuda/cublaslt_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpt_sft::runtime::device::cuda {
namespace {

absl::StatusOr<CublasLtApi> Load() {
  std::vector<std::string> candidates = {"libcublasLt.so.13", "libcublasLt.so.12"};
  if (const char* env = std::getenv("GPT_SFT_LIBCUBLASLT"); env != nullptr && env[0] != '\0') candidates = {env};
  void* lib = nullptr;
  std::vector<std::string> errors;
  for (const std::string& name : candidates) {
    if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    errors.push_back(dlerror());
  }
  if (lib == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no cuBLASLt: ", absl::StrJoin(errors, "; "),
        " (the step's matmuls call cuBLASLt: install it, set GPT_SFT_LIBCUBLASLT to its path, or compile the step "
        "with the compiler's own gemm: GPT_SFT_CUDA_GEMM=tiled)"));
  }
  CublasLtApi api{};
  std::string missing;
  auto bind = [&](auto& field, const char* name) {
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(dlsym(lib, name));
    if (field == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", name);
  };
  bind(api.Create, "cublasLtCreate");
  bind(api.Destroy, "cublasLtDestroy");
  bind(api.GetVersion, "cublasLtGetVersion");
  bind(api.GetStatusName, "cublasLtGetStatusName");
  bind(api.MatmulDescCreate, "cublasLtMatmulDescCreate");
  bind(api.MatmulDescDestroy, "cublasLtMatmulDescDestroy");
  bind(api.MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  bind(api.MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  bind(api.MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  bind(api.MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  bind(api.MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  bind(api.MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  bind(api.MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  bind(api.Matmul, "cublasLtMatmul");
  if (!missing.empty()) return absl::FailedPreconditionError(absl::StrCat("cuBLASLt lacks ", missing));
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
