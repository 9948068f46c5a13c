// Implements CudnnApi::Get (DynamicLibrary: dlopen + dlsym) and CudnnStatusName.
#include "runtime/device/cuda/cudnn_api.h"

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/dynamic_library.h"

namespace gpt_sft::runtime::device::cuda {
namespace {

absl::StatusOr<CudnnApi> Load() {
  std::vector<std::string> candidates = {"libcudnn.so.9"};
  if (const char* env = std::getenv("GPT_SFT_LIBCUDNN"); env != nullptr && env[0] != '\0') candidates = {env};
  absl::StatusOr<base::DynamicLibrary> lib = absl::NotFoundError("no candidate");
  std::vector<std::string> errors;
  for (const std::string& name : candidates) {
    if ((lib = base::DynamicLibrary::Open(name)).ok()) break;
    errors.emplace_back(lib.status().message());
  }
  if (!lib.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no cuDNN: ", absl::StrJoin(errors, "; "),
        " (the step was compiled with --attention=cudnn: install cuDNN 9, set GPT_SFT_LIBCUDNN to its path, or "
        "compile the step with the generated attention kernels: --attention=generated)"));
  }
  CudnnApi api{};
  lib->Bind(api.GetVersion, "cudnnGetVersion");
  lib->Bind(api.GetErrorString, "cudnnGetErrorString");
  lib->Bind(api.Create, "cudnnCreate");
  lib->Bind(api.Destroy, "cudnnDestroy");
  lib->Bind(api.SetStream, "cudnnSetStream");
  lib->Bind(api.BackendCreateDescriptor, "cudnnBackendCreateDescriptor");
  lib->Bind(api.BackendDestroyDescriptor, "cudnnBackendDestroyDescriptor");
  lib->Bind(api.BackendFinalize, "cudnnBackendFinalize");
  lib->Bind(api.BackendSetAttribute, "cudnnBackendSetAttribute");
  lib->Bind(api.BackendGetAttribute, "cudnnBackendGetAttribute");
  lib->Bind(api.BackendExecute, "cudnnBackendExecute");
  if (!lib->missing().empty()) return absl::FailedPreconditionError(absl::StrCat("cuDNN lacks ", lib->missing()));
  return api;  // the library stays loaded for the process
}

}  // namespace

absl::StatusOr<const CudnnApi*> CudnnApi::Get() {
  static const absl::StatusOr<CudnnApi>* loaded = new absl::StatusOr<CudnnApi>(Load());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

std::string CudnnStatusName(const CudnnApi& dnn, cudnnStatus status) {
  const char* name = dnn.GetErrorString != nullptr ? dnn.GetErrorString(status) : nullptr;
  return name != nullptr ? std::string(name) : absl::StrCat("cuDNN status ", status);
}

}  // namespace gpt_sft::runtime::device::cuda
