// Implements CachingAllocator: a multimap from bucket size to cached blocks under a mutex.
#include "runtime/base/caching_allocator.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

namespace gpt_sft::runtime {

struct CachingAllocator::State {
  explicit State(int64_t max_cached) : max_cached_bytes(max_cached) {}
  ~State() {
    for (auto& [size, block] : cache) std::free(block);
  }

  void* Take(size_t size) {
    std::lock_guard<std::mutex> lock(mutex);
    void* block = nullptr;
    size_t block_size = size;
    auto it = cache.lower_bound(size);
    if (it != cache.end() && it->first <= size + size / 4) {
      block = it->second;
      block_size = it->first;
      cache.erase(it);
      stats.bytes_cached -= static_cast<int64_t>(block_size);
      ++stats.allocations_from_cache;
    } else {
      block = std::aligned_alloc(kTensorAlignment, size);
      if (block == nullptr) return nullptr;
      ++stats.allocations_fresh;
    }
    sizes[block] = block_size;
    stats.bytes_live += static_cast<int64_t>(block_size);
    stats.peak_bytes_live = std::max(stats.peak_bytes_live, stats.bytes_live);
    return block;
  }

  void Give(void* block) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = sizes.find(block);
    const size_t size = it->second;
    sizes.erase(it);
    stats.bytes_live -= static_cast<int64_t>(size);
    if (stats.bytes_cached + static_cast<int64_t>(size) > max_cached_bytes) {
      std::free(block);
      return;
    }
    cache.emplace(size, block);
    stats.bytes_cached += static_cast<int64_t>(size);
  }

  void Release() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& [size, block] : cache) std::free(block);
    cache.clear();
    stats.bytes_cached = 0;
  }

  const int64_t max_cached_bytes;
  mutable std::mutex mutex;
  std::multimap<size_t, void*> cache;  // bucket size -> free block
  std::map<void*, size_t> sizes;       // live block -> its bucket size
  AllocatorStats stats;
};

CachingAllocator::CachingAllocator(int64_t max_cached_bytes)
    : state_(std::make_shared<State>(max_cached_bytes)) {}

CachingAllocator::~CachingAllocator() = default;

size_t CachingAllocator::BucketSize(size_t bytes) {
  constexpr size_t kSmallGranule = 512, kLarge = size_t{1} << 20;
  bytes = std::max<size_t>(bytes, 1);
  if (bytes <= kLarge) return (bytes + kSmallGranule - 1) / kSmallGranule * kSmallGranule;
  size_t power = kLarge;
  while (power * 2 <= bytes) power *= 2;
  const size_t granule = power / 8;
  return (bytes + granule - 1) / granule * granule;
}

std::shared_ptr<void> CachingAllocator::Allocate(size_t bytes) {
  void* block = state_->Take(BucketSize(bytes));
  if (block == nullptr) return nullptr;
  std::shared_ptr<State> state = state_;  // the deleter keeps the cache alive
  return std::shared_ptr<void>(block, [state](void* p) { state->Give(p); });
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->stats;
}

void CachingAllocator::ResetPeak() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->stats.peak_bytes_live = state_->stats.bytes_live;
}

void CachingAllocator::ReleaseCache() { state_->Release(); }

}  // namespace gpt_sft::runtime
