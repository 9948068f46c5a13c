// ArtifactCache: compiled steps on disk, one file per key under the cache root (the
// trainer's is <base_dir>/compile_cache): <root>/<key>/step.gptart, the artifact in its own
// checked format (artifact/FORMAT.md: every blob's size and hash). A store writes a
// temporary directory and renames it into place, so a reader sees a whole entry or none and
// two processes storing the same key leave one intact entry; a damaged entry is an error
// naming the file, never a silently wrong program.
#ifndef GPT_SFT_COMPILER_CODEGEN_ARTIFACT_CACHE_H_
#define GPT_SFT_COMPILER_CODEGEN_ARTIFACT_CACHE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "artifact/artifact.h"

namespace gpt_sft::compiler {

class ArtifactCache {
 public:
  explicit ArtifactCache(std::string root) : root_(std::move(root)) {}

  /// NotFound when no entry has `key`; DataLoss naming the file when it is damaged, of
  /// another format version or made by another compiler version.
  absl::StatusOr<artifact::Artifact> Load(const std::string& key) const;
  /// Writes `artifact` under its key (an existing intact entry is kept as it is).
  absl::Status Store(const artifact::Artifact& artifact) const;

  std::string EntryDir(const std::string& key) const { return root_ + "/" + key; }
  std::string ArtifactPath(const std::string& key) const { return EntryDir(key) + "/step.gptart"; }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_ARTIFACT_CACHE_H_
