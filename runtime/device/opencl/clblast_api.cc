// Implements ClBlastApi::Get.
#include "runtime/device/opencl/clblast_api.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/dynamic_library.h"

namespace gpt_sft::runtime::device::opencl {
namespace {

absl::StatusOr<ClBlastApi> Load() {
  const char* env = std::getenv("GPT_SFT_LIBCLBLAST");
  const std::string library = env != nullptr && env[0] != '\0' ? env : "libclblast.so.1";
  absl::StatusOr<base::DynamicLibrary> lib = base::DynamicLibrary::Open(library);
  if (!lib.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no CLBlast: ", library, " cannot be loaded (", lib.status().message(),
        "); the step's matmuls call it: install Debian's libclblast1, set GPT_SFT_LIBCLBLAST, or compile the step "
        "with the compiler's own gemm (GPT_SFT_OPENCL_GEMM=tiled, the default)"));
  }
  ClBlastApi api{};
  lib->Bind(api.Sgemm, "CLBlastSgemm");
  lib->Bind(api.SgemmStridedBatched, "CLBlastSgemmStridedBatched");
  if (!lib->missing().empty()) {
    return absl::FailedPreconditionError(absl::StrCat(library, " lacks ", lib->missing()));
  }
  return api;  // the library stays loaded for the process
}

}  // namespace

absl::StatusOr<const ClBlastApi*> ClBlastApi::Get() {
  static const absl::StatusOr<ClBlastApi>* loaded = new absl::StatusOr<ClBlastApi>(Load());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

}  // namespace gpt_sft::runtime::device::opencl
