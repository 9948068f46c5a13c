// Implements ClBlastApi::Get.
#include "runtime/device/opencl/clblast_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime::device::opencl {
namespace {

absl::StatusOr<ClBlastApi> Load() {
  const char* env = std::getenv("GPT_SFT_LIBCLBLAST");
  const std::string library = env != nullptr && env[0] != '\0' ? env : "libclblast.so.1";
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no CLBlast: ", library, " cannot be loaded (", dlerror(),
        "); the step's matmuls call it: install Debian's libclblast1, set GPT_SFT_LIBCLBLAST, or compile the step "
        "with the compiler's own gemm (GPT_SFT_OPENCL_GEMM=tiled, the default)"));
  }
  ClBlastApi api{};
  api.Sgemm = reinterpret_cast<decltype(api.Sgemm)>(dlsym(lib, "CLBlastSgemm"));
  if (api.Sgemm == nullptr) return absl::FailedPreconditionError(absl::StrCat(library, " lacks CLBlastSgemm"));
  return api;  // the library stays loaded for the process
}

}  // namespace

absl::StatusOr<const ClBlastApi*> ClBlastApi::Get() {
  static const absl::StatusOr<ClBlastApi>* loaded = new absl::StatusOr<ClBlastApi>(Load());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

}  // namespace gpt_sft::runtime::device::opencl
