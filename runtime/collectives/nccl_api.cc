// Implements NcclApi::Get.
#include "runtime/collectives/nccl_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime::collectives {
namespace {

absl::StatusOr<NcclApi> Load() {
  const char* env = std::getenv("GPT_SFT_LIBNCCL");
  const std::string library = env != nullptr && env[0] != '\0' ? env : "libnccl.so.2";
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("no NCCL: ", library, " cannot be loaded (", dlerror(),
                                                      "); GPU ranks need it (or set GPT_SFT_LIBNCCL to its path)"));
  }
  NcclApi api{};
  std::string missing;
  auto bind = [&](auto& field, const char* name) {
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(dlsym(lib, name));
    if (field == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", name);
  };
  bind(api.GetUniqueId, "ncclGetUniqueId");
  bind(api.CommInitRank, "ncclCommInitRank");
  bind(api.CommDestroy, "ncclCommDestroy");
  bind(api.CommAbort, "ncclCommAbort");
  bind(api.CommGetAsyncError, "ncclCommGetAsyncError");
  bind(api.GetErrorString, "ncclGetErrorString");
  bind(api.AllReduce, "ncclAllReduce");
  bind(api.ReduceScatter, "ncclReduceScatter");
  bind(api.AllGather, "ncclAllGather");
  bind(api.Broadcast, "ncclBroadcast");
  if (!missing.empty()) return absl::FailedPreconditionError(absl::StrCat(library, " lacks ", missing));
  return api;  // the library stays loaded for the process
}

}  // namespace

absl::StatusOr<const NcclApi*> NcclApi::Get() {
  static const absl::StatusOr<NcclApi>* loaded = new absl::StatusOr<NcclApi>(Load());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

}  // namespace gpt_sft::runtime::collectives
