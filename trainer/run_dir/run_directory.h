// RunDirectory: the trainer's output directory, held by one run at a time. Opening it
//   1. checks the path: an existing file, or a directory this process cannot write, is an error
//      naming the path, before anything is created;
//   2. creates it (and its parents) if missing;
//   3. takes an exclusive lock: flock on <dir>/.lock, which then holds "<pid> <host>". A second
//      run into the same directory is refused, naming the pid and host in the lock file. The
//      kernel drops the lock when the process ends, however it ends, so no stale lock is left;
//   4. removes the temp files and directories that dead writers left (step_directory.h).
// A directory belongs to one run: FindEarlierRun says whether another run's steps or records are
// there (a fresh run is then refused, sft_run.cc), MoveEntriesAside moves them out (--overwrite).
// The lock is held until the RunDirectory is destroyed (or the process ends).
#ifndef GPT_SFT_TRAINER_RUN_DIR_RUN_DIRECTORY_H_
#define GPT_SFT_TRAINER_RUN_DIR_RUN_DIRECTORY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpt_sft::trainer {

class RunDirectory {
 public:
  /// `where` names `path` in errors as the user gave it: "--output_dir=<path>", or for a default
  /// "--base_dir=<b>: the run directory <path>".
  static absl::StatusOr<std::unique_ptr<RunDirectory>> Open(const std::string& path, const std::string& where);
  ~RunDirectory();
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const std::string& path() const { return path_; }
  /// The dead writers' temp entries that Open removed.
  const std::vector<std::string>& removed_temps() const { return removed_; }

  /// What an earlier run left here, so a fresh run neither mixes with it nor replaces its
  /// steps: its newest saved step, its metrics records and its id (from the last record).
  struct EarlierRun {
    std::optional<int64_t> last_step;
    int64_t records = 0;             // lines of metrics.jsonl
    std::optional<int64_t> run_id;   // "run" of its last metrics record
  };
  /// The earlier run this directory holds (step_<N>/ directories or metrics records), or
  /// nullopt when it holds none.
  std::optional<EarlierRun> FindEarlierRun() const;
  /// Moves every entry but the lock into <path>.replaced.<N>/ (the first free N from 1), never
  /// deleting anything; returns that directory.
  absl::StatusOr<std::string> MoveEntriesAside();

 private:
  RunDirectory(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  std::string path_;
  int lock_fd_;
  std::vector<std::string> removed_;
};

/// Cuts `path` (a metrics.jsonl) back to its first `bytes` bytes, so a resumed run's log holds
/// exactly the records of the steps before its checkpoint. A file shorter than that is left as
/// it is and reported (FailedPrecondition naming it).
absl::Status TruncateFileTo(const std::string& path, int64_t bytes);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_RUN_DIR_RUN_DIRECTORY_H_
