// Where checkpoints live and which one a run means (nanochat's checkpoint_manager at HEAD):
//   <base_dir>/<source>_checkpoints/<model_tag>/model_%06d.safetensors + meta_%06d.json
// or, as our trainer writes its run directories, one directory per step that appeared by one
// rename (step_directory.h):
//   <run_dir>/step_%06d/model_%06d.safetensors + meta_%06d.json (+ the trainer's resume files)
// Both layouts are read everywhere a checkpoint directory is; a step present in both is read
// from its step directory.
// base_dir is $NANOCHAT_BASE_DIR when set and non-empty, else ~/.cache/nanochat. Without
// --model_tag the largest depth among subdirectories named d<digits>... wins (else the most
// recently modified subdirectory); without --step the numerically largest step among files
// named exactly model_<digits>.safetensors wins (temp files and other names never count).
#ifndef GPT_SFT_RUNTIME_CHECKPOINT_CHECKPOINT_PATHS_H_
#define GPT_SFT_RUNTIME_CHECKPOINT_CHECKPOINT_PATHS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpt_sft::runtime {

/// nanochat's four checkpoint directories; chat SFT reads kBase (HEAD) and writes kSft.
enum class CheckpointSource { kBase, kMid, kSft, kRl };

/// "base_checkpoints", "mid_checkpoints", "chatsft_checkpoints", "chatrl_checkpoints".
absl::string_view CheckpointDirName(CheckpointSource source);

/// $NANOCHAT_BASE_DIR if set and non-empty, else $HOME/.cache/nanochat. Creates nothing.
absl::StatusOr<std::string> NanochatBaseDir();

/// "model_000650.safetensors" and "meta_000650.json" (at least 6 digits, zero-padded).
std::string ModelFileName(int64_t step);
std::string MetaFileName(int64_t step);
/// "step_000650": the directory one step of a run directory lives in.
std::string StepDirName(int64_t step);

/// The model tag to use under `source_dir` when none is given. NotFound if it has no subdirectory.
absl::StatusOr<std::string> FindLargestModelTag(const std::string& source_dir);

/// The step to use in `checkpoint_dir` when none is given: the largest among flat files named
/// exactly model_<digits>.safetensors and directories named exactly step_<digits> that hold
/// their model file (temp directories never match). NotFound if there is none.
absl::StatusOr<int64_t> FindLastStep(const std::string& checkpoint_dir);

struct ResolvedCheckpoint {
  std::string dir;        // <base_dir>/<source>_checkpoints/<model_tag>
  std::string model_tag;  // e.g. "d20"
  int64_t step = 0;
  std::string model_path, meta_path;
};

/// The files of `step` in `dir`: inside <dir>/step_%06d/ when that directory exists, else flat
/// in `dir`. Touches nothing; the files need not exist.
ResolvedCheckpoint CheckpointFilesOf(const std::string& dir, int64_t step);

/// Applies the defaults above; `model_tag` and `step` are the --model_tag and --step flags.
absl::StatusOr<ResolvedCheckpoint> ResolveCheckpoint(const std::string& base_dir, CheckpointSource source,
                                                     std::optional<std::string> model_tag,
                                                     std::optional<int64_t> step);

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_CHECKPOINT_CHECKPOINT_PATHS_H_
