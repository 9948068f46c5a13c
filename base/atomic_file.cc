// Implements AtomicFile with POSIX calls (fsync and directory fsync are what iostreams lack).
#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace gpt_sft::base {
namespace {

std::string BaseName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

}  // namespace

absl::StatusOr<std::unique_ptr<AtomicFile>> AtomicFile::Open(const std::string& path, FaultHook hook) {
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  if (hook) {
    if (absl::Status s = hook(absl::StrCat(BaseName(path), ":open")); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("cannot create a temp file for ", path, ": ", s.message()));
    }
  }
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot create a temp file for ", path, ": ", strerror(errno)));
  }
  return std::unique_ptr<AtomicFile>(new AtomicFile(path, temp, fd, std::move(hook)));
}

AtomicFile::~AtomicFile() {
  if (!published_) Abandon();
}

void AtomicFile::Abandon() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  unlink(temp_.c_str());
}

absl::Status AtomicFile::Fail(absl::string_view what, int err) {
  Abandon();
  return absl::InternalError(absl::StrCat("cannot ", what, " ", path_, ": ", strerror(err)));
}

absl::Status AtomicFile::Check(absl::string_view step) {
  if (!hook_) return absl::OkStatus();
  absl::Status s = hook_(absl::StrCat(BaseName(path_), ":", step));
  if (!s.ok()) {
    Abandon();
    return absl::Status(s.code(), absl::StrCat("cannot ", step, " ", path_, ": ", s.message()));
  }
  return s;
}

absl::Status AtomicFile::Append(const void* data, size_t size) {
  if (fd_ < 0 || synced_) return absl::FailedPreconditionError(absl::StrCat("write to ", path_, " after Sync or a failure"));
  if (absl::Status s = Check("write"); !s.ok()) return s;
  const char* p = static_cast<const char*>(data);
  for (size_t done = 0; done < size;) {
    const ssize_t n = write(fd_, p + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail("write", errno);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Sync() {
  if (fd_ < 0 || synced_) return absl::FailedPreconditionError(absl::StrCat("Sync of ", path_, " twice or after a failure"));
  if (absl::Status s = Check("fsync"); !s.ok()) return s;
  if (fsync(fd_) != 0) return Fail("fsync", errno);
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) return Fail("close", errno);
  synced_ = true;
  return absl::OkStatus();
}

absl::Status AtomicFile::Publish() {
  if (!synced_ || published_) return absl::FailedPreconditionError(absl::StrCat("Publish of ", path_, " before Sync"));
  if (absl::Status s = Check("rename"); !s.ok()) return s;
  if (rename(temp_.c_str(), path_.c_str()) != 0) return Fail("rename a temp file onto", errno);
  published_ = true;
  // The rename is done and visible; fsync of the directory makes it survive a power loss.
  // A failure here is reported, but the new file stays: it is complete.
  if (absl::Status s = Check("fsync directory"); !s.ok()) return s;
  const std::string dir = std::filesystem::path(path_).parent_path().string();
  const int dfd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return absl::InternalError(absl::StrCat("cannot open the directory of ", path_, ": ", strerror(errno)));
  const int rc = fsync(dfd), err = errno;
  close(dfd);
  if (rc != 0) return absl::InternalError(absl::StrCat("cannot fsync the directory of ", path_, ": ", strerror(err)));
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents, FaultHook hook) {
  absl::StatusOr<std::unique_ptr<AtomicFile>> f = AtomicFile::Open(path, std::move(hook));
  if (!f.ok()) return f.status();
  if (absl::Status s = (*f)->Append(contents.data(), contents.size()); !s.ok()) return s;
  if (absl::Status s = (*f)->Sync(); !s.ok()) return s;
  return (*f)->Publish();
}

}  // namespace gpt_sft::base
