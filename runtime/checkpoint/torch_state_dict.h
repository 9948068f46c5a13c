// A state_dict as torch.save writes it (NANOCHAT.md 7.3): a zip archive (zip_archive.h) whose
// one top-level folder <archive>/ holds data.pkl, a protocol-2 pickle of an OrderedDict
// name -> tensor, each tensor torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
// requires_grad, hooks) with the storage a persistent id ('storage', torch.<Type>Storage, key,
// location, numel) whose little-endian bytes are the entry <archive>/data/<key>; beside them
// the records byteorder ("little") and version.
//
// The types nanochat saves are read: FloatStorage (fp32) and BFloat16Storage (bf16, widened
// exactly to float32). Each tensor must be contiguous (row-major strides) and lie inside its
// storage. Everything is checked before data is read; errors name the file and the tensor or
// entry at fault.
#ifndef GPT_SFT_RUNTIME_CHECKPOINT_TORCH_STATE_DICT_H_
#define GPT_SFT_RUNTIME_CHECKPOINT_TORCH_STATE_DICT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/atomic_file.h"
#include "runtime/checkpoint/zip_archive.h"

namespace gpt_sft::runtime {

enum class TorchDtype { kFloat32, kBFloat16 };

struct TorchTensor {
  std::string name;             // the state_dict key, as stored
  TorchDtype dtype;
  std::vector<int64_t> shape;
  const ZipEntry* storage;      // the entry <archive>/data/<key>
  int64_t storage_offset;       // in elements
  int64_t numel() const;
};

class TorchStateDict {
 public:
  /// Opens `path` and checks its pickle and every tensor against its storage.
  static absl::StatusOr<TorchStateDict> Read(const std::string& path);

  const std::string& path() const { return zip_.path(); }
  /// In the file's order.
  const std::vector<TorchTensor>& tensors() const { return tensors_; }
  /// Reads `tensor` into `dst` (tensor.numel() floats), bf16 widened exactly.
  absl::Status ReadFloat32(const TorchTensor& tensor, float* dst) const;

 private:
  explicit TorchStateDict(ZipReader zip) : zip_(std::move(zip)) {}
  ZipReader zip_;
  std::vector<TorchTensor> tensors_;
};

/// One tensor to write: `data` holds numel x (4 or 2) little-endian bytes of `dtype`.
struct TorchTensorBytes {
  std::string name;
  TorchDtype dtype;
  std::vector<int64_t> shape;
  const void* data;
};

/// Appends the torch.save archive of these tensors (an OrderedDict in this order, storage
/// keys "0", "1", ..., location "cpu") to `out`, under the top-level folder `archive_name`
/// (torch uses the file's stem, e.g. "model_000650"). Deterministic: equal inputs give
/// identical bytes. The caller Syncs and Publishes `out`.
absl::Status WriteTorchStateDict(absl::string_view archive_name, const std::vector<TorchTensorBytes>& tensors,
                                 base::AtomicFile& out);

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_CHECKPOINT_TORCH_STATE_DICT_H_
