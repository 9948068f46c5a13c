// AtomicFile: writes a file so that readers see the old contents or the new, never a part.
// Bytes go to a temp file beside the target (same directory, so rename is atomic); Commit()
// fsyncs it, renames it onto the target and fsyncs the directory so the rename is durable.
#ifndef GPT_SFT_BASE_ATOMIC_FILE_H_
#define GPT_SFT_BASE_ATOMIC_FILE_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpt_sft::base {

/// Called at each step of a write with a label such as "model_000650.safetensors:write";
/// a non-OK status makes that step fail as if the system call had. Tests use it to simulate a
/// crash or a full disk at every point; production code passes none.
using FaultHook = std::function<absl::Status(absl::string_view point)>;

/// Usage: Open, Append as often as needed, Sync, Publish. Until Publish succeeds the target
/// is untouched; the destructor removes the temp file of an unpublished write, so a failed or
/// abandoned write leaves nothing behind. Not thread-safe; one writer per target.
class AtomicFile {
 public:
  /// Creates `<path>.tmp.<pid>` (truncating any stale one of ours). `hook` may be empty.
  static absl::StatusOr<std::unique_ptr<AtomicFile>> Open(const std::string& path, FaultHook hook = {});
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  absl::Status Append(const void* data, size_t size);
  /// fsync + close of the temp file: after this the bytes are on disk, not yet visible.
  absl::Status Sync();
  /// rename onto the target, then fsync of the directory. Requires Sync().
  absl::Status Publish();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }

 private:
  AtomicFile(std::string path, std::string temp, int fd, FaultHook hook)
      : path_(std::move(path)), temp_(std::move(temp)), fd_(fd), hook_(std::move(hook)) {}
  absl::Status Fail(absl::string_view what, int err);
  absl::Status Check(absl::string_view step);
  void Abandon();

  std::string path_, temp_;
  int fd_;  // -1 after Sync
  FaultHook hook_;
  bool synced_ = false, published_ = false;
};

/// One-shot form: the whole of `contents` written atomically to `path`.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents, FaultHook hook = {});

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_ATOMIC_FILE_H_
