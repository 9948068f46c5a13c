// Implements HostMemory with mmap / madvise / munmap.
#include "runtime/device/cpu/host_memory.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime::device::cpu {
namespace {

constexpr int64_t kHugePage = int64_t{2} << 20;

}  // namespace

absl::StatusOr<HostMemory> HostMemory::Map(int64_t bytes) {
  if (bytes <= 0) return absl::InvalidArgumentError(absl::StrCat("an arena of ", bytes, " bytes"));
  const int64_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  const int64_t mapped = rounded + kHugePage;  // room to start on a huge-page boundary
  void* p = mmap(nullptr, static_cast<size_t>(mapped), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot map the step's arena of ", bytes, " bytes: ", std::strerror(errno)));
  }
  const uintptr_t aligned = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) / kHugePage * kHugePage;
  HostMemory arena;
  arena.mapping_ = p;
  arena.mapped_bytes_ = mapped;
  arena.data_ = reinterpret_cast<void*>(aligned);
  arena.bytes_ = rounded;
  madvise(arena.data_, static_cast<size_t>(rounded), MADV_HUGEPAGE);  // advice: no THP is not an error
  return arena;
}

HostMemory::~HostMemory() {
  if (mapping_ != nullptr) munmap(mapping_, static_cast<size_t>(mapped_bytes_));
}

HostMemory::HostMemory(HostMemory&& other) noexcept { *this = std::move(other); }

HostMemory& HostMemory::operator=(HostMemory&& other) noexcept {
  if (this != &other) {
    if (mapping_ != nullptr) munmap(mapping_, static_cast<size_t>(mapped_bytes_));
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  }
  return *this;
}

absl::Status HostMemory::Release() {
  if (data_ == nullptr) return absl::OkStatus();
  if (madvise(data_, static_cast<size_t>(bytes_), MADV_DONTNEED) != 0) {
    return absl::InternalError(absl::StrCat("madvise(MADV_DONTNEED) of the step's arena (", bytes_,
                                            " bytes): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::runtime::device::cpu
