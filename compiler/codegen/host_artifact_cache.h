// HostArtifactCache: compiled steps on disk, one directory per key under the cache root
// (the trainer's is <base_dir>/compile_cache):
//   <root>/<key>/manifest.json   version, target, kernel table, compile time, and the size
//                                and xxh3 of each file below
//   <root>/<key>/step.mlir       StepArtifact::step_ir
//   <root>/<key>/kernels.o       StepArtifact::kernels.object
// A store writes a temporary directory and renames it into place, so a reader sees a whole
// entry or none, and two processes storing the same key leave one intact entry. A load
// checks every size and hash: a damaged or partial entry is an error naming the file, never
// a silently wrong program.
#ifndef GPT_SFT_COMPILER_CODEGEN_HOST_ARTIFACT_CACHE_H_
#define GPT_SFT_COMPILER_CODEGEN_HOST_ARTIFACT_CACHE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/step_artifact.h"

namespace gpt_sft::compiler {

class HostArtifactCache {
 public:
  explicit HostArtifactCache(std::string root) : root_(std::move(root)) {}

  /// NotFound when no entry has `key`; DataLoss naming the file when the entry is damaged
  /// or of another compiler version.
  absl::StatusOr<StepArtifact> Load(const std::string& key) const;

  /// Writes `artifact` under its key (an existing intact entry is kept as it is).
  absl::Status Store(const StepArtifact& artifact) const;

  /// The directory of `key`'s entry.
  std::string EntryDir(const std::string& key) const { return root_ + "/" + key; }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_HOST_ARTIFACT_CACHE_H_
