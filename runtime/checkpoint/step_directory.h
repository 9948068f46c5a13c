// StepDirectory: one checkpoint step of a run directory that becomes visible all at once.
// Every file of the step (model, meta, the trainer's resume files) is written into
//   <run_dir>/.step_%06d.tmp.<pid>/
// and fsynced; Publish() fsyncs that directory, renames it to <run_dir>/step_%06d/ and fsyncs
// the run directory. A reader therefore sees either no step_%06d/ or a complete one: a kill at
// any instant leaves the previous steps and, once the rename happened, the new one whole.
// Replacing a step that exists (a rerun that saves the same step again) swaps the two
// directories with one renameat2(RENAME_EXCHANGE), so step_%06d/ is never missing; the old
// contents, now under the temp name, are removed after.
//
//   auto step = StepDirectory::Begin(run_dir, 650);
//   SaveCheckpoint((*step)->temp_dir(), store, record);   // + any other files of the step
//   (*step)->Publish();                                    // -> run_dir/step_000650/
#ifndef GPT_SFT_RUNTIME_CHECKPOINT_STEP_DIRECTORY_H_
#define GPT_SFT_RUNTIME_CHECKPOINT_STEP_DIRECTORY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/atomic_file.h"

namespace gpt_sft::runtime {

class StepDirectory {
 public:
  /// Creates the temp directory (removing a stale one of this pid first). `run_dir` must exist.
  /// `hook` (tests) can fail the steps of Publish: "step:fsync", "step:rename",
  /// "step:fsync run directory"; failing "step:exchange" acts as a filesystem without
  /// renameat2(RENAME_EXCHANGE) (the step then replaces an existing one by two renames).
  static absl::StatusOr<std::unique_ptr<StepDirectory>> Begin(const std::string& run_dir, int64_t step,
                                                              base::FaultHook hook = {});
  /// Removes the temp directory unless Publish succeeded.
  ~StepDirectory();
  StepDirectory(const StepDirectory&) = delete;
  StepDirectory& operator=(const StepDirectory&) = delete;

  /// Where the step's files go until Publish.
  const std::string& temp_dir() const { return temp_; }
  /// <run_dir>/step_%06d, where they are after Publish.
  const std::string& final_dir() const { return final_; }

  /// fsync of the temp directory, one rename (or exchange) onto final_dir(), fsync of the run
  /// directory. Errors name the directory; after a failure the previous step_%06d/ (if any)
  /// is still there.
  absl::Status Publish();

 private:
  StepDirectory(std::string run_dir, std::string temp, std::string final_dir, base::FaultHook hook)
      : run_dir_(std::move(run_dir)), temp_(std::move(temp)), final_(std::move(final_dir)), hook_(std::move(hook)) {}
  absl::Status Check(const char* point);

  std::string run_dir_, temp_, final_;
  base::FaultHook hook_;
  bool published_ = false;
};

/// Whether `name` is a temp entry a writer leaves while it works (".step_%06d.tmp.<pid>",
/// "<file>.tmp.<pid>"), and if so the pid that made it.
std::optional<int64_t> TempEntryPid(const std::string& name);

/// Removes the temp directories and files in `run_dir` (not below) whose writer is dead (no
/// process of that pid; a live pid's are left alone). Returns the names removed. Errors name the
/// entry that could not be removed.
absl::StatusOr<std::vector<std::string>> RemoveDeadTemps(const std::string& run_dir);

/// fsync of a directory (so the renames in it survive a power loss). Errors name it.
absl::Status SyncDirectory(const std::string& dir);

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_CHECKPOINT_STEP_DIRECTORY_H_
