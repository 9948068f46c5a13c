// Implements RunDirectory with flock(2) and std::filesystem's error_code overloads.
#include "trainer/run_dir/run_directory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "runtime/checkpoint/step_directory.h"

namespace gpt_sft::trainer {
namespace {

namespace fs = std::filesystem;

std::string HostName() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) return "an unknown host";
  return host;
}

/// The pid and host the lock file names (what a refused run reports).
std::string LockHolder(int fd) {
  char text[512] = {0};
  const ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
  const std::string holder(absl::StripAsciiWhitespace(std::string(text, n > 0 ? size_t(n) : 0)));
  if (holder.empty()) return "another process (its lock file names none yet)";
  const size_t space = holder.find(' ');
  if (space == std::string::npos) return "pid " + holder;
  return absl::StrCat("pid ", holder.substr(0, space), " on host ", holder.substr(space + 1));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RunDirectory>> RunDirectory::Open(const std::string& path, const std::string& where) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  // Missing, or a part of the path is a file: creating it says which.
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    return absl::FailedPreconditionError(absl::StrCat(where, ": cannot inspect it: ", ec.message()));
  }
  if (fs::exists(status) && !fs::is_directory(status)) {
    return absl::FailedPreconditionError(absl::StrCat(where, " is a file, not a directory; the run directory ",
                                                      "(checkpoints, metrics.jsonl) must be a directory"));
  }
  if (!fs::exists(status)) {
    fs::create_directories(path, ec);
    if (ec) return absl::FailedPreconditionError(absl::StrCat(where, ": cannot create the run directory: ", ec.message()));
  }
  if (access(path.c_str(), W_OK | X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(where, ": the run directory is not writable: ", strerror(errno)));
  }
  const std::string lock_path = (fs::path(path) / ".lock").string();
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::FailedPreconditionError(absl::StrCat("cannot create the lock file ", lock_path, ": ", strerror(errno)));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string holder = err == EWOULDBLOCK ? LockHolder(fd) : "";
    close(fd);
    if (err == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(where, " is in use by another run: ", holder, " holds ", lock_path,
                                                        ". Wait for it to end, or choose another --output_dir"));
    }
    return absl::FailedPreconditionError(absl::StrCat("cannot lock ", lock_path, ": ", strerror(err)));
  }
  const std::string holder = absl::StrCat(getpid(), " ", HostName(), "\n");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, holder.data(), holder.size(), 0) != ssize_t(holder.size())) {
    const int err = errno;
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat("cannot write the lock file ", lock_path, ": ", strerror(err)));
  }
  std::unique_ptr<RunDirectory> dir(new RunDirectory(path, fd));
  absl::StatusOr<std::vector<std::string>> removed = runtime::RemoveDeadTemps(path);
  if (!removed.ok()) return removed.status();
  dir->removed_ = *std::move(removed);
  return dir;
}

std::optional<RunDirectory::EarlierRun> RunDirectory::FindEarlierRun() const {
  EarlierRun earlier;
  if (absl::StatusOr<int64_t> last = runtime::FindLastStep(path_); last.ok()) earlier.last_step = *last;
  std::ifstream metrics(fs::path(path_) / "metrics.jsonl");
  std::string line, last_line;
  while (std::getline(metrics, line)) {
    if (line.empty()) continue;
    ++earlier.records;
    last_line = line;
  }
  const nlohmann::json last = nlohmann::json::parse(last_line, nullptr, /*allow_exceptions=*/false);
  if (last.is_object() && last.contains("run") && last["run"].is_number_integer()) {
    earlier.run_id = last["run"].get<int64_t>();
  }
  if (!earlier.last_step && earlier.records == 0) return std::nullopt;
  return earlier;
}

absl::StatusOr<std::string> RunDirectory::MoveEntriesAside() {
  std::error_code ec;
  std::string aside;
  for (int n = 1;; ++n) {
    aside = absl::StrCat(path_, ".replaced.", n);
    if (!fs::exists(aside, ec) && !ec) break;
    if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot inspect ", aside, ": ", ec.message()));
  }
  fs::create_directory(aside, ec);
  if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot create ", aside, ": ", ec.message()));
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(path_, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() != ".lock") entries.push_back(it->path());
  }
  if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot list ", path_, ": ", ec.message()));
  for (const fs::path& entry : entries) {
    fs::rename(entry, fs::path(aside) / entry.filename(), ec);  // same file system: a rename each
    if (ec) {
      return absl::FailedPreconditionError(absl::StrCat("cannot move ", entry.string(), " into ", aside, ": ",
                                                        ec.message(), " (what was moved is there; nothing was deleted)"));
    }
  }
  return aside;
}

RunDirectory::~RunDirectory() {
  if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock
}

absl::Status TruncateFileTo(const std::string& path, int64_t bytes) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) {
    if (bytes == 0 && ec == std::errc::no_such_file_or_directory) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat("cannot read the size of ", path, ": ", ec.message()));
  }
  if (size < uintmax_t(bytes)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " has ", size, " bytes, fewer than the ", bytes,
                                                      " it had when the checkpoint was saved: records were lost"));
  }
  if (size == uintmax_t(bytes)) return absl::OkStatus();
  fs::resize_file(path, uintmax_t(bytes), ec);
  if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot cut ", path, " back to ", bytes, " bytes: ", ec.message()));
  return absl::OkStatus();
}

}  // namespace gpt_sft::trainer
