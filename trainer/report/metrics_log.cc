#include "trainer/report/metrics_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace gpt_sft::trainer {

absl::StatusOr<std::unique_ptr<MetricsLog>> MetricsLog::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot create the metrics file ", path, ": ", strerror(errno)));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot read the size of the metrics file ", path, ": ", strerror(err)));
  }
  return std::unique_ptr<MetricsLog>(new MetricsLog(path, fd, st.st_size));
}

MetricsLog::~MetricsLog() { close(fd_); }

absl::Status MetricsLog::AppendLine(const std::string& line) {
  const std::string whole = line + "\n";
  // One write(2) of the whole line; a regular file takes less only when it cannot take more (a
  // full disk, a file-size limit): writing the rest then fails with the reason.
  size_t done = 0;
  int err = 0;
  while (done < whole.size()) {
    const ssize_t n = write(fd_, whole.data() + done, whole.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
    done += size_t(n);
  }
  if (done == whole.size()) {
    bytes_ += int64_t(done);
    return absl::OkStatus();
  }
  // Cut the part off again, so the file ends with the last whole record.
  const bool cut = ftruncate(fd_, bytes_) == 0;
  return absl::UnavailableError(absl::StrCat("cannot append to the metrics file ", path_, ": ", strerror(err),
                                             cut ? " (the file keeps its whole records)"
                                                 : "; cutting the partial record off failed too"));
}

absl::Status MetricsLog::Append(const StepRecord& r) {
  nlohmann::ordered_json j;
  j["run"] = r.run;
  j["step"] = r.step;
  j["mode"] = r.mode;
  j["world_size"] = r.world_size;
  j["loss"] = r.loss;
  j["loss_mean"] = r.loss_mean;
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& [b, t] : r.batch_shapes) shapes.push_back({b, t});
  j["batch_shapes"] = shapes;
  j["recompilations"] = r.recompilations;
  j["lr_multiplier"] = r.lr_multiplier;
  j["tokens"] = r.tokens;
  j["supervised_tokens"] = r.supervised_tokens;
  j["padding_fraction"] = r.padding_fraction;
  j["step_seconds"] = r.step_seconds;
  j["tokens_per_second"] = r.tokens_per_second;
  j["supervised_tokens_per_second"] = r.supervised_tokens_per_second;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  return AppendLine(j.dump());
}

}  // namespace gpt_sft::trainer
