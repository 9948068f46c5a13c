// HostMemory: the compiled step's arena as its own anonymous mapping, so that its pages can
// be given back to the OS between runs. The arena holds intermediates only (parameters,
// gradients and optimizer state live in the caller's buffers), so nothing in it is needed
// once a Run's results have been read; a caller that runs something else in between (the
// trainer's interpreted evaluation) releases it and keeps one working set resident, not two.
// Touching released pages maps fresh zero pages again, so a released arena is always valid.
//
// The mapping starts on a 2 MiB boundary and asks for transparent huge pages (MADV_HUGEPAGE;
// Debian's default THP mode is "madvise"): a step streams through a GiB of activations, and
// 4 KiB pages cost it a TLB miss every 4 KiB. Where THP is off the advice is ignored.
#ifndef GPT_SFT_RUNTIME_DEVICE_CPU_HOST_MEMORY_H_
#define GPT_SFT_RUNTIME_DEVICE_CPU_HOST_MEMORY_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace gpt_sft::runtime::device::cpu {

class HostMemory {
 public:
  HostMemory() = default;
  /// `bytes` (> 0) of page-aligned, zero-filled memory; ResourceExhausted naming the size
  /// when the OS refuses it.
  static absl::StatusOr<HostMemory> Map(int64_t bytes);
  ~HostMemory();
  HostMemory(HostMemory&& other) noexcept;
  HostMemory& operator=(HostMemory&& other) noexcept;
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;

  void* data() const { return data_; }
  int64_t bytes() const { return bytes_; }
  /// Gives every page back (MADV_DONTNEED): resident size drops by what the last runs
  /// touched, and the contents read as zeros afterwards.
  absl::Status Release();

 private:
  void* data_ = nullptr;     // 2 MiB aligned, inside the mapping
  int64_t bytes_ = 0;
  void* mapping_ = nullptr;  // what munmap takes
  int64_t mapped_bytes_ = 0;
};

}  // namespace gpt_sft::runtime::device::cpu

#endif  // GPT_SFT_RUNTIME_DEVICE_CPU_HOST_MEMORY_H_
