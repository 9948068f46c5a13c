// Checkpoints of a ParamStore: <dir>/model_%06d.safetensors (the tensors, F32) and
// <dir>/meta_%06d.json (checkpoint_meta.h), written from the ParamStore view only.
//
// Save is atomic per file and ordered so that a failure at any point leaves every earlier
// checkpoint as it was and no temp file or partial new checkpoint behind:
//   1. both files are written in full to temp files beside their targets and fsynced;
//   2. the model is renamed into place, then the meta (each rename followed by a directory
//      fsync); if the meta's rename fails, a model file this save created is removed again.
// The one window left, a crash between the two renames while overwriting an existing step,
// leaves a model that does not match its meta: the load sees it through the meta's
// param_checksum and refuses it.
#ifndef GPT_SFT_RUNTIME_CHECKPOINT_CHECKPOINT_H_
#define GPT_SFT_RUNTIME_CHECKPOINT_CHECKPOINT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "base/atomic_file.h"
#include "runtime/checkpoint/checkpoint_meta.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::runtime {

struct SaveOptions {
  base::FaultHook fault_hook;  // tests only: fail a chosen step of the write (base/atomic_file.h)
};

/// Writes the checkpoint of `record.step` into `dir` (created if missing). The meta's
/// model_config, num_params and param_checksum come from `store`. Returns the paths written.
absl::StatusOr<ResolvedCheckpoint> SaveCheckpoint(const std::string& dir, const ParamStore& store,
                                                  const CheckpointRecord& record, const SaveOptions& options = {});

/// nanochat's chat-SFT location: <base_dir>/chatsft_checkpoints/d<n_layer>/ (the tag always
/// comes from the depth, never from the input model's tag).
absl::StatusOr<ResolvedCheckpoint> SaveSftCheckpoint(const std::string& base_dir, const ParamStore& store,
                                                     const CheckpointRecord& record, const SaveOptions& options = {});

struct LoadedCheckpoint {
  ParamStore params;  // built from the meta's model_config
  CheckpointMeta meta;
};

/// Reads meta then model of `step` in `dir` (in <dir>/step_%06d/ when that exists, else flat:
/// CheckpointFilesOf); the model file is checked tensor by tensor
/// (param_file.h) and, when the meta records one, against its param_checksum. The result is a
/// new store, so a failed load leaves the caller's weights untouched.
absl::StatusOr<LoadedCheckpoint> LoadCheckpoint(const std::string& dir, int64_t step);

/// ResolveCheckpoint, then LoadCheckpoint.
absl::StatusOr<LoadedCheckpoint> LoadCheckpoint(const ResolvedCheckpoint& where);

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_CHECKPOINT_CHECKPOINT_H_
