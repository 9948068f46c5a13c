// Implements StepDirectory and the removal of dead writers' temp entries with POSIX calls
// (renameat2 for the exchange; std::filesystem only through its error_code overloads).
#include "runtime/checkpoint/step_directory.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/checkpoint/checkpoint_paths.h"

namespace gpt_sft::runtime {
namespace {

namespace fs = std::filesystem;

bool ProcessIsAlive(int64_t pid) {
  if (pid <= 0) return true;  // not a pid we could have written: leave it alone
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot open the directory ", dir, ": ", strerror(errno)));
  const int rc = fsync(fd), err = errno;
  close(fd);
  if (rc != 0) return absl::InternalError(absl::StrCat("cannot fsync the directory ", dir, ": ", strerror(err)));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<StepDirectory>> StepDirectory::Begin(const std::string& run_dir, int64_t step,
                                                                   base::FaultHook hook) {
  if (step < 0) return absl::InvalidArgumentError(absl::StrCat("checkpoint step ", step, " is negative"));
  const std::string name = StepDirName(step);
  const std::string temp = (fs::path(run_dir) / absl::StrCat(".", name, ".tmp.", getpid())).string();
  std::error_code ec;
  fs::remove_all(temp, ec);  // a leftover of this pid (an earlier failed save)
  if (ec) return absl::InternalError(absl::StrCat("cannot remove the stale ", temp, ": ", ec.message()));
  if (mkdir(temp.c_str(), 0755) != 0) {
    return absl::InternalError(absl::StrCat("cannot create the checkpoint directory ", temp, ": ", strerror(errno)));
  }
  return std::unique_ptr<StepDirectory>(
      new StepDirectory(run_dir, temp, (fs::path(run_dir) / name).string(), std::move(hook)));
}

StepDirectory::~StepDirectory() {
  std::error_code ec;
  if (!published_ || fs::exists(temp_, ec)) fs::remove_all(temp_, ec);  // after an exchange: the old step
}

absl::Status StepDirectory::Check(const char* point) {
  if (!hook_) return absl::OkStatus();
  absl::Status s = hook_(point);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("cannot publish ", final_, " (", point, "): ", s.message()));
}

absl::Status StepDirectory::Publish() {
  if (published_) return absl::FailedPreconditionError(absl::StrCat(final_, " was published already"));
  if (absl::Status s = Check("step:fsync"); !s.ok()) return s;
  if (absl::Status s = SyncDirectory(temp_); !s.ok()) return s;
  if (absl::Status s = Check("step:rename"); !s.ok()) return s;
  std::error_code ec;
  if (fs::exists(final_, ec)) {
    // Swap, so that final_ always names a complete step; temp_ then holds the old one.
    // (Tests take the path of a filesystem without it through the hook point "step:exchange".)
    const bool exchange_unsupported = hook_ && !hook_("step:exchange").ok();
    if (exchange_unsupported ||
        renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, final_.c_str(), RENAME_EXCHANGE) != 0) {
      if (exchange_unsupported) errno = EINVAL;
      if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
        return absl::InternalError(
            absl::StrCat("cannot replace ", final_, " with ", temp_, " (rename exchange): ", strerror(errno)));
      }
      // A filesystem without the exchange: the old step steps aside under a name no cleanup
      // removes (a crash right here leaves it there, whole, rather than nowhere), then the new
      // one moves in.
      const std::string aside = absl::StrCat(temp_.substr(0, temp_.rfind(".tmp.")), ".replaced.", getpid());
      fs::remove_all(aside, ec);
      if (rename(final_.c_str(), aside.c_str()) != 0) {
        return absl::InternalError(absl::StrCat("cannot move ", final_, " aside to replace it: ", strerror(errno)));
      }
      if (rename(temp_.c_str(), final_.c_str()) != 0) {
        const int err = errno;
        rename(aside.c_str(), final_.c_str());
        return absl::InternalError(absl::StrCat("cannot rename ", temp_, " to ", final_, ": ", strerror(err)));
      }
      published_ = true;
      fs::remove_all(aside, ec);
      return SyncDirectory(run_dir_);
    }
  } else if (rename(temp_.c_str(), final_.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot rename ", temp_, " to ", final_, ": ", strerror(errno)));
  }
  published_ = true;
  fs::remove_all(temp_, ec);  // the replaced step, if any
  // Visible now; the fsync makes the rename survive a power loss. A failure is reported, but the
  // new step stays: it is complete.
  if (absl::Status s = Check("step:fsync run directory"); !s.ok()) return s;
  return SyncDirectory(run_dir_);
}

std::optional<int64_t> TempEntryPid(const std::string& name) {
  const size_t at = name.rfind(".tmp.");
  if (at == std::string::npos || at == 0) return std::nullopt;
  int64_t pid = 0;
  const std::string digits = name.substr(at + 5);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  if (!absl::SimpleAtoi(digits, &pid)) return std::nullopt;
  return pid;
}

absl::StatusOr<std::vector<std::string>> RemoveDeadTemps(const std::string& run_dir) {
  std::vector<std::string> removed;
  std::error_code ec;
  fs::directory_iterator it(run_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot list the run directory ", run_dir, ": ", ec.message()));
  std::vector<fs::path> dead;
  for (const fs::directory_entry& e : it) {
    const std::string name = e.path().filename().string();
    std::optional<int64_t> pid = TempEntryPid(name);
    if (pid && !ProcessIsAlive(*pid)) dead.push_back(e.path());
  }
  for (const fs::path& p : dead) {
    fs::remove_all(p, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot remove the dead writer's ", p.string(), ": ", ec.message()));
    removed.push_back(p.filename().string());
  }
  return removed;
}

}  // namespace gpt_sft::runtime
