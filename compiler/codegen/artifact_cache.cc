// Implements ArtifactCache: Load reads and checks one file; Store writes it into a private
// temporary directory and renames the directory into place.
#include "compiler/codegen/artifact_cache.h"

#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/read_file.h"
#include "artifact/artifact_file.h"
#include "compiler/codegen/artifact_key.h"
#include "compiler/codegen/external_tool.h"

namespace gpt_sft::compiler {

namespace fs = std::filesystem;

absl::StatusOr<artifact::Artifact> ArtifactCache::Load(const std::string& key) const {
  const std::string path = ArtifactPath(key);
  std::error_code ec;  // an unreadable cache dir is a miss, not an exception
  if (!fs::exists(path, ec)) return absl::NotFoundError(absl::StrCat("no compiled step under ", EntryDir(key)));
  absl::StatusOr<std::string> bytes = base::ReadFile(path);
  if (!bytes.ok()) return absl::DataLossError(absl::StrCat("compile cache: ", bytes.status().message()));
  absl::StatusOr<artifact::Artifact> a = artifact::ParseArtifact(*bytes, path);
  if (!a.ok()) {
    return absl::DataLossError(absl::StrCat("compile cache: ", a.status().message(), "; delete ", EntryDir(key),
                                            " to recompile"));
  }
  if (a->key != key || a->compiler_version != kCompilerVersion) {
    return absl::DataLossError(absl::StrCat("compile cache: ", path, " holds key ", a->key, " of compiler ",
                                            a->compiler_version, ", not ", key, " of ", kCompilerVersion));
  }
  return a;
}

absl::Status ArtifactCache::Store(const artifact::Artifact& a) const {
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) return absl::UnavailableError("cannot create the compile cache " + root_ + ": " + ec.message());
  if (Load(a.key).ok()) return absl::OkStatus();
  const std::string final_dir = EntryDir(a.key);
  const std::string tmp = absl::StrCat(root_, "/.tmp-", a.key, "-", getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) return absl::UnavailableError("cannot create " + tmp + ": " + ec.message());
  if (absl::Status s = WriteWholeFile(tmp + "/step.gptart", artifact::SerializeArtifact(a)); !s.ok()) {
    fs::remove_all(tmp, ec);
    return absl::UnavailableError(absl::StrCat("compile cache: ", s.message()));
  }
  // A damaged entry under the key is replaced; an intact one written meanwhile by another
  // process wins (rename fails on a non-empty directory) and ours is dropped.
  if (fs::exists(final_dir, ec) && !Load(a.key).ok()) fs::remove_all(final_dir, ec);
  fs::rename(tmp, final_dir, ec);
  if (ec) {
    fs::remove_all(tmp, ec);
    if (Load(a.key).ok()) return absl::OkStatus();
    return absl::UnavailableError("cannot move the compiled step into " + final_dir);
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::compiler
