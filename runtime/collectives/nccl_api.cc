// Implements NcclApi::Get.
#include "runtime/collectives/nccl_api.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/dynamic_library.h"

namespace gpt_sft::runtime::collectives {
namespace {

absl::StatusOr<NcclApi> Load() {
  const char* env = std::getenv("GPT_SFT_LIBNCCL");
  const std::string library = env != nullptr && env[0] != '\0' ? env : "libnccl.so.2";
  absl::StatusOr<base::DynamicLibrary> lib = base::DynamicLibrary::Open(library);
  if (!lib.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("no NCCL: ", library, " cannot be loaded (", lib.status().message(),
                                                      "); GPU ranks need it (or set GPT_SFT_LIBNCCL to its path)"));
  }
  NcclApi api{};
  lib->Bind(api.GetUniqueId, "ncclGetUniqueId");
  lib->Bind(api.CommInitRank, "ncclCommInitRank");
  lib->Bind(api.CommDestroy, "ncclCommDestroy");
  lib->Bind(api.CommAbort, "ncclCommAbort");
  lib->Bind(api.CommGetAsyncError, "ncclCommGetAsyncError");
  lib->Bind(api.GetErrorString, "ncclGetErrorString");
  lib->Bind(api.AllReduce, "ncclAllReduce");
  lib->Bind(api.ReduceScatter, "ncclReduceScatter");
  lib->Bind(api.AllGather, "ncclAllGather");
  lib->Bind(api.Broadcast, "ncclBroadcast");
  if (!lib->missing().empty()) return absl::FailedPreconditionError(absl::StrCat(library, " lacks ", lib->missing()));
  return api;  // the library stays loaded for the process
}

}  // namespace

absl::StatusOr<const NcclApi*> NcclApi::Get() {
  static const absl::StatusOr<NcclApi>* loaded = new absl::StatusOr<NcclApi>(Load());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

}  // namespace gpt_sft::runtime::collectives
