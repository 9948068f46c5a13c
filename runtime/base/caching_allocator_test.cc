#include "runtime/base/caching_allocator.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime {
namespace {

TEST(CachingAllocator, BucketsRoundUpWithBoundedWaste) {
  EXPECT_EQ(CachingAllocator::BucketSize(0), 512u);
  EXPECT_EQ(CachingAllocator::BucketSize(1), 512u);
  EXPECT_EQ(CachingAllocator::BucketSize(513), 1024u);
  EXPECT_EQ(CachingAllocator::BucketSize(1 << 20), size_t{1} << 20);
  for (size_t bytes : {size_t{3} << 20, size_t{5000000}, size_t{1} << 30, size_t{123456789}}) {
    const size_t bucket = CachingAllocator::BucketSize(bytes);
    EXPECT_GE(bucket, bytes);
    EXPECT_LE(bucket, bytes + bytes / 8) << bytes;
  }
}

TEST(CachingAllocator, BlocksAreAligned) {
  CachingAllocator allocator;
  for (size_t bytes : {1, 100, 4096, 1 << 21}) {
    auto block = allocator.Allocate(bytes);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block.get()) % kTensorAlignment, 0u);
  }
}

TEST(CachingAllocator, FreedBlockIsReusedNotReturned) {
  CachingAllocator allocator;
  const int64_t bucket = static_cast<int64_t>(CachingAllocator::BucketSize(64 << 20));
  void* first = nullptr;
  {
    auto block = allocator.Allocate(64 << 20);
    first = block.get();
    EXPECT_EQ(allocator.stats().bytes_live, bucket);
    EXPECT_EQ(allocator.stats().allocations_fresh, 1);
  }
  AllocatorStats after_free = allocator.stats();
  EXPECT_EQ(after_free.bytes_live, 0);
  EXPECT_EQ(after_free.bytes_cached, bucket);
  auto again = allocator.Allocate(64 << 20);
  EXPECT_EQ(again.get(), first);
  EXPECT_EQ(allocator.stats().allocations_from_cache, 1);
  EXPECT_EQ(allocator.stats().allocations_fresh, 1);
  EXPECT_EQ(allocator.stats().bytes_cached, 0);
}

TEST(CachingAllocator, SlightlySmallerRequestReusesButTinyOneDoesNot) {
  CachingAllocator allocator;
  { auto big = allocator.Allocate(10 << 20); }
  { auto tiny = allocator.Allocate(1000); }
  EXPECT_EQ(allocator.stats().allocations_from_cache, 0);
  auto slightly_smaller = allocator.Allocate(9 << 20);
  EXPECT_EQ(allocator.stats().allocations_from_cache, 1);
}

TEST(CachingAllocator, PeakTracksTheMaximumAndResets) {
  CachingAllocator allocator;
  {
    auto a = allocator.Allocate(1 << 20);
    auto b = allocator.Allocate(1 << 20);
  }
  EXPECT_EQ(allocator.stats().peak_bytes_live, 2 << 20);
  allocator.ResetPeak();
  EXPECT_EQ(allocator.stats().peak_bytes_live, 0);
  auto c = allocator.Allocate(1 << 20);
  EXPECT_EQ(allocator.stats().peak_bytes_live, 1 << 20);
}

TEST(CachingAllocator, ReleaseCacheEmptiesIt) {
  CachingAllocator allocator;
  { auto a = allocator.Allocate(1 << 22); }
  EXPECT_GT(allocator.stats().bytes_cached, 0);
  allocator.ReleaseCache();
  EXPECT_EQ(allocator.stats().bytes_cached, 0);
  auto b = allocator.Allocate(1 << 22);
  EXPECT_EQ(allocator.stats().allocations_fresh, 2);
}

TEST(CachingAllocator, CacheLimitSendsBlocksBack) {
  CachingAllocator allocator(/*max_cached_bytes=*/1 << 20);
  { auto a = allocator.Allocate(4 << 20); }
  EXPECT_EQ(allocator.stats().bytes_cached, 0);
}

TEST(CachingAllocator, BlocksMayOutliveTheAllocator) {
  std::shared_ptr<void> block;
  {
    CachingAllocator allocator;
    block = allocator.Allocate(4096);
  }
  static_cast<char*>(block.get())[0] = 1;
  block.reset();  // must not touch a destroyed allocator
}

}  // namespace
}  // namespace gpt_sft::runtime
