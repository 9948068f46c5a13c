// Implements ArtifactCache: manifest, checked load, atomic store.
#include "compiler/codegen/artifact_cache.h"

#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_file.h"
#include "base/json_file.h"
#include "base/read_file.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/xxhash.h"
#include "nlohmann/json.hpp"

namespace gpt_sft::compiler {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kManifest[] = "manifest.json";
constexpr char kStepIr[] = "step.mlir";
constexpr char kObject[] = "kernels.o";

std::string Hash(const std::string& bytes) {
  return absl::StrFormat("%016x", llvm::xxh3_64bits(llvm::StringRef(bytes)));
}

json FileEntry(const std::string& bytes) { return {{"bytes", bytes.size()}, {"xxh3", Hash(bytes)}}; }

/// The file `name` of the entry, checked against the manifest's size and hash.
absl::StatusOr<std::string> ReadChecked(const std::string& dir, const json& manifest, const std::string& name) {
  const std::string path = dir + "/" + name;
  absl::StatusOr<std::string> bytes = base::ReadFile(path);
  if (!bytes.ok()) return absl::DataLossError(absl::StrCat("compile cache entry ", dir, ": ", bytes.status().message()));
  const json& entry = manifest["files"][name];
  if (entry["bytes"].get<size_t>() != bytes->size() || entry["xxh3"].get<std::string>() != Hash(*bytes)) {
    return absl::DataLossError(absl::StrCat("compile cache file ", path, " does not match its manifest (",
                                            bytes->size(), " bytes, expected ", entry["bytes"].get<size_t>(),
                                            "): the entry is damaged; delete ", dir, " to recompile"));
  }
  return bytes;
}

}  // namespace

absl::StatusOr<StepArtifact> ArtifactCache::Load(const std::string& key) const {
  const std::string dir = EntryDir(key);
  absl::StatusOr<json> read = base::ReadJsonFile<json>(dir + "/" + kManifest);
  if (absl::IsNotFound(read.status())) return absl::NotFoundError(absl::StrCat("no compiled step ", key, " in ", root_));
  if (!read.ok()) return absl::DataLossError(absl::StrCat("compile cache entry ", dir, " is damaged: ", read.status().message()));
  try {
    const json& manifest = *read;
    if (manifest.at("version").get<std::string>() != kCompilerVersion || manifest.at("key").get<std::string>() != key) {
      return absl::DataLossError(absl::StrCat("compile cache entry ", dir, " was written by ",
                                              manifest.at("version").get<std::string>(), " for key ",
                                              manifest.at("key").get<std::string>(), "; this is ", kCompilerVersion));
    }
    StepArtifact artifact;
    artifact.key = key;
    artifact.compile_seconds = manifest.at("compile_seconds").get<double>();
    artifact.kernels.target = manifest.at("target").get<std::string>();
    for (const json& k : manifest.at("kernels")) {
      FusionKernel kernel;
      kernel.symbol = k.at("symbol").get<std::string>();
      kernel.num_inputs = k.at("inputs").get<int>();
      kernel.num_results = k.at("results").get<int>();
      kernel.num_elements = k.at("elements").get<int64_t>();
      kernel.element_bytes = k.at("element_bytes").get<int>();
      artifact.kernels.kernels.push_back(kernel);
    }
    absl::StatusOr<std::string> ir = ReadChecked(dir, manifest, kStepIr);
    if (!ir.ok()) return ir.status();
    absl::StatusOr<std::string> object = ReadChecked(dir, manifest, kObject);
    if (!object.ok()) return object.status();
    artifact.step_ir = *std::move(ir);
    artifact.kernels.object = *std::move(object);
    return artifact;
  } catch (const json::exception& e) {
    return absl::DataLossError(absl::StrCat("compile cache manifest ", dir, "/", kManifest, " is malformed: ", e.what()));
  }
}

absl::Status ArtifactCache::Store(const StepArtifact& artifact) const {
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) return absl::UnavailableError("cannot create the compile cache " + root_ + ": " + ec.message());
  const std::string final_dir = EntryDir(artifact.key);
  if (Load(artifact.key).ok()) return absl::OkStatus();
  const std::string tmp = absl::StrCat(root_, "/.tmp-", artifact.key, "-", getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) return absl::UnavailableError("cannot create " + tmp + ": " + ec.message());

  json manifest;
  manifest["key"] = artifact.key;
  manifest["version"] = kCompilerVersion;
  manifest["target"] = artifact.kernels.target;
  manifest["compile_seconds"] = artifact.compile_seconds;
  manifest["kernels"] = json::array();
  for (const FusionKernel& k : artifact.kernels.kernels) {
    manifest["kernels"].push_back({{"symbol", k.symbol},
                                   {"inputs", k.num_inputs},
                                   {"results", k.num_results},
                                   {"elements", k.num_elements},
                                   {"element_bytes", k.element_bytes}});
  }
  manifest["files"][kStepIr] = FileEntry(artifact.step_ir);
  manifest["files"][kObject] = FileEntry(artifact.kernels.object);
  // The manifest goes last: an entry without one is never read. Each file is written with
  // base::WriteFileAtomically, so it is on disk (fsynced) before the directory that holds
  // them is published below.
  for (auto [name, bytes] : {std::pair<const char*, const std::string*>{kStepIr, &artifact.step_ir},
                             {kObject, &artifact.kernels.object}}) {
    if (absl::Status s = base::WriteFileAtomically(tmp + "/" + name, *bytes); !s.ok()) return s;
  }
  if (absl::Status s = base::WriteFileAtomically(tmp + "/" + kManifest, manifest.dump(2) + "\n"); !s.ok()) return s;

  // The entry is published as a whole by renaming its directory (base/atomic_file.h publishes
  // one file; an entry is three). A damaged entry under the key is replaced; an intact one
  // written meanwhile by another process wins (rename fails on a non-empty directory) and
  // ours is dropped.
  if (fs::exists(final_dir) && !Load(artifact.key).ok()) fs::remove_all(final_dir, ec);
  fs::rename(tmp, final_dir, ec);
  if (ec) {
    fs::remove_all(tmp, ec);
    if (Load(artifact.key).ok()) return absl::OkStatus();
    return absl::UnavailableError("cannot move the compiled step into " + final_dir);
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::compiler
