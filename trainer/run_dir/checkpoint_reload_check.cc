#include "trainer/run_dir/checkpoint_reload_check.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/checkpoint/checkpoint.h"

namespace gpt_sft::trainer {
namespace {

/// Empty when equal, else what differs first.
std::string FirstDifference(const runtime::ParamStore& a, const runtime::ParamStore& b) {
  if (a.params().size() != b.params().size()) {
    return absl::StrCat(a.params().size(), " tensors reloaded, ", b.params().size(), " trained");
  }
  for (size_t i = 0; i < a.params().size(); ++i) {
    const runtime::Param& x = a.params()[i];
    const runtime::Param& y = b.params()[i];
    if (x.name != y.name || x.shape != y.shape) return absl::StrCat("tensor ", i, ": ", x.name, " vs ", y.name);
    for (int64_t e = 0; e < x.numel(); ++e) {
      if (std::memcmp(x.data() + e, y.data() + e, sizeof(float)) != 0) {
        return absl::StrCat(x.name, " element ", e, ": reloaded ", x.data()[e], ", trained ", y.data()[e]);
      }
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<ReloadComparison> ReloadAndCompare(const std::string& dir, int64_t step,
                                                  const runtime::ParamStore& trained) {
  absl::StatusOr<runtime::LoadedCheckpoint> loaded = runtime::LoadCheckpoint(dir, step);
  if (!loaded.ok()) {
    return absl::Status(loaded.status().code(),
                        absl::StrCat("reloading the checkpoint just saved: ", loaded.status().message()));
  }
  ReloadComparison result;
  result.reloaded = std::make_unique<runtime::ParamStore>(std::move(loaded->params));
  result.mismatch = FirstDifference(*result.reloaded, trained);
  result.bit_exact = result.mismatch.empty();
  return result;
}

}  // namespace gpt_sft::trainer
