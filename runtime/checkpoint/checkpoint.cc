// Implements SaveCheckpoint and LoadCheckpoint.
#include "runtime/checkpoint/checkpoint.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/read_file.h"
#include "runtime/checkpoint/param_file.h"

namespace gpt_sft::runtime {
namespace {

namespace fs = std::filesystem;

/// The flat files of `step` in `dir` (where SaveCheckpoint writes).
ResolvedCheckpoint PathsFor(const std::string& dir, int64_t step) {
  ResolvedCheckpoint r;
  r.dir = dir;
  r.model_tag = fs::path(dir).filename().string();
  r.step = step;
  r.model_path = (fs::path(dir) / ModelFileName(step)).string();
  r.meta_path = (fs::path(dir) / MetaFileName(step)).string();
  return r;
}

}  // namespace

absl::StatusOr<ResolvedCheckpoint> SaveCheckpoint(const std::string& dir, const ParamStore& store,
                                                  const CheckpointRecord& record, const SaveOptions& options) {
  if (record.step < 0) return absl::InvalidArgumentError(absl::StrCat("checkpoint step ", record.step, " is negative"));
  const ResolvedCheckpoint out = PathsFor(dir, record.step);
  CheckpointMeta meta;
  meta.record = record;
  meta.model_config = store.config();
  meta.model_file = ModelFileName(record.step);
  meta.dtype = "F32";
  meta.num_params = store.NumParams();
  meta.param_checksum = store.Checksum();
  // Everything that can be checked is checked before the first byte hits the disk.
  absl::StatusOr<std::string> meta_json = MetaToJson(meta);
  if (!meta_json.ok()) return meta_json.status();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create checkpoint directory ", dir, ": ", ec.message()));

  // 1. Both files complete and fsynced under temp names.
  absl::StatusOr<std::unique_ptr<base::AtomicFile>> model = base::AtomicFile::Open(out.model_path, options.fault_hook);
  if (!model.ok()) return model.status();
  if (absl::Status s = WriteParamFile(store, {{"format", "pt"}, {"writer", "gpt_sft"}}, **model); !s.ok()) return s;
  if (absl::Status s = (*model)->Sync(); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<base::AtomicFile>> meta_file = base::AtomicFile::Open(out.meta_path, options.fault_hook);
  if (!meta_file.ok()) return meta_file.status();
  if (absl::Status s = (*meta_file)->Append(meta_json->data(), meta_json->size()); !s.ok()) return s;
  if (absl::Status s = (*meta_file)->Sync(); !s.ok()) return s;

  // 2. Model, then meta, into place; undo a new model whose meta could not follow.
  const bool model_existed = fs::exists(out.model_path, ec);
  absl::Status s = (*model)->Publish();
  if (s.ok()) s = (*meta_file)->Publish();
  if (!s.ok() && !model_existed && !fs::exists(out.meta_path, ec)) unlink(out.model_path.c_str());
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<ResolvedCheckpoint> SaveSftCheckpoint(const std::string& base_dir, const ParamStore& store,
                                                     const CheckpointRecord& record, const SaveOptions& options) {
  const fs::path dir = fs::path(base_dir) / std::string(CheckpointDirName(CheckpointSource::kSft)) /
                       absl::StrCat("d", store.config().n_layer);
  return SaveCheckpoint(dir.string(), store, record, options);
}

absl::StatusOr<LoadedCheckpoint> LoadCheckpoint(const ResolvedCheckpoint& where) {
  absl::StatusOr<std::string> text = base::ReadFile(where.meta_path);
  if (!text.ok()) return text.status();
  absl::StatusOr<CheckpointMeta> meta = MetaFromJson(where.meta_path, *text);
  if (!meta.ok()) return meta.status();
  if (meta->record.step != where.step) {
    return absl::InvalidArgumentError(
        absl::StrCat(where.meta_path, ": records step ", meta->record.step, ", its name says ", where.step));
  }
  const std::string model_name = fs::path(where.model_path).filename().string();
  if (meta->model_file && *meta->model_file != model_name) {
    return absl::InvalidArgumentError(
        absl::StrCat(where.meta_path, ": belongs to model file ", *meta->model_file, ", not ", model_name));
  }
  absl::StatusOr<ParamStore> store = ReadParamFile(where.model_path, meta->model_config);
  if (!store.ok()) return store.status();
  if (meta->num_params && *meta->num_params != store->NumParams()) {
    return absl::InvalidArgumentError(absl::StrCat(where.meta_path, ": num_params ", *meta->num_params, " but ",
                                                   where.model_path, " holds ", store->NumParams()));
  }
  if (meta->param_checksum && *meta->param_checksum != store->Checksum()) {
    return absl::DataLossError(absl::StrFormat("%s: checksum %016x, but %s has %016x: the data is corrupted or the "
                                               "model file does not belong to this meta",
                                               where.meta_path, *meta->param_checksum, where.model_path,
                                               store->Checksum()));
  }
  return LoadedCheckpoint{*std::move(store), *std::move(meta)};
}

absl::StatusOr<LoadedCheckpoint> LoadCheckpoint(const std::string& dir, int64_t step) {
  return LoadCheckpoint(CheckpointFilesOf(dir, step));
}

}  // namespace gpt_sft::runtime
