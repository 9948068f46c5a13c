// MetricsLog: the run directory's metrics.jsonl, one JSON record per optimizer step, written as
// the run goes. Each record is one write(2) of the whole line, so a killed run keeps every
// finished step's record; a write that fails part way (a full disk) is cut off again
// (ftruncate to the last whole line), so the file never holds a torn line, and the error names
// the file. A later run in the same directory appends; its records carry its own "run" id (the
// start time), so no earlier run's records are lost (a resumed run keeps its run's id).
#ifndef GPT_SFT_TRAINER_REPORT_METRICS_LOG_H_
#define GPT_SFT_TRAINER_REPORT_METRICS_LOG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace gpt_sft::trainer {

struct StepRecord {
  int64_t run = 0;  // the run's id: its start, in seconds since the epoch
  int64_t step = 0;
  std::string mode;         // "compiled" or "eager"
  int world_size = 1;       // data-parallel ranks
  double loss = 0;          // rank 0's last micro-batch's, as nanochat logs it
  double loss_mean = 0;     // over every micro-batch of every rank (the step's full batch)
  std::vector<std::pair<int64_t, int64_t>> batch_shapes;  // the distinct [B, T] of its micro-batches
  int64_t recompilations = 0;  // compilations after the compiled step was made, so far
  double lr_multiplier = 0;
  int64_t tokens = 0;       // positions processed (B*T per micro-step, every rank)
  int64_t supervised_tokens = 0;
  double padding_fraction = 0;  // of the step's positions, not supervised
  double step_seconds = 0;
  double tokens_per_second = 0;
  double supervised_tokens_per_second = 0;
  int64_t peak_rss_bytes = 0;
};

class MetricsLog {
 public:
  /// Creates `path` or appends to it (its directory must exist). Errors name the file.
  static absl::StatusOr<std::unique_ptr<MetricsLog>> Open(const std::string& path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  absl::Status Append(const StepRecord& record);
  /// Appends one line (`line` without its newline) as Append does.
  absl::Status AppendLine(const std::string& line);
  const std::string& path() const { return path_; }
  /// The file's length after the last whole record.
  int64_t bytes() const { return bytes_; }

 private:
  MetricsLog(std::string path, int fd, int64_t bytes) : path_(std::move(path)), fd_(fd), bytes_(bytes) {}
  std::string path_;
  int fd_;
  int64_t bytes_;
};

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_REPORT_METRICS_LOG_H_
