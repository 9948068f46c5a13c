// CachingAllocator: host memory for tensors (the interpreter's values), 64-byte aligned, with a
// size-bucketed cache of freed blocks (the idea of PyTorch's caching allocators).
//
// Why: an eager step frees and re-allocates the same large activations every step. Giving
// them back to the OS (free -> munmap) and taking them again (malloc -> mmap, then a page
// fault per 4 KiB on first touch) is what costs eager PyTorch on the CPU a large part of its
// step. Here a freed block goes to the cache and the next request of its bucket reuses it,
// pages already mapped. ReleaseCache() gives the cached blocks back.
//
// Buckets: requests are rounded up to a multiple of 512 bytes below 1 MiB, and above it to
// a multiple of 1/8 of the request's power of two (<= 12.5% waste). A cached block serves a
// request whose rounded size it covers with at most 25% to spare, so a slightly shorter
// sequence reuses a longer one's block but a tiny tensor never pins a huge one.
//
// Ownership: Allocate returns a shared_ptr whose deleter hands the block back; blocks may
// outlive the CachingAllocator object (the cache state is shared with them). Thread-safe.
#ifndef GPT_SFT_RUNTIME_BASE_CACHING_ALLOCATOR_H_
#define GPT_SFT_RUNTIME_BASE_CACHING_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>

namespace gpt_sft::runtime {

inline constexpr size_t kTensorAlignment = 64;

struct AllocatorStats {
  int64_t bytes_live = 0;       // in blocks handed out and not yet freed (bucket sizes)
  int64_t peak_bytes_live = 0;  // max of bytes_live since construction or ResetPeak()
  int64_t bytes_cached = 0;     // freed blocks kept for reuse
  int64_t allocations_from_cache = 0;
  int64_t allocations_fresh = 0;  // served by the OS (aligned_alloc)
};

class CachingAllocator {
 public:
  /// `max_cached_bytes`: a freed block that would push the cache above this goes back to
  /// the OS instead (default: no limit; a training step's working set is cached whole).
  explicit CachingAllocator(int64_t max_cached_bytes = std::numeric_limits<int64_t>::max());
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  /// A block of at least `bytes` bytes (>= 1), 64-byte aligned, uninitialised. Returns
  /// null only when the OS refuses the memory.
  std::shared_ptr<void> Allocate(size_t bytes);

  AllocatorStats stats() const;
  /// Peak := current live bytes (to measure one step's peak).
  void ResetPeak();
  /// Frees every cached block to the OS; live blocks are untouched.
  void ReleaseCache();

  /// The bucket size a request of `bytes` is rounded to (exposed for tests).
  static size_t BucketSize(size_t bytes);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_BASE_CACHING_ALLOCATOR_H_
