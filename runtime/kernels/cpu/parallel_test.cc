#include "runtime/kernels/cpu/parallel.h"

#include <atomic>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::kernels {
namespace {

// Every index is visited exactly once, chunks respect the grain, for several thread counts.
TEST(ParallelFor, CoversTheRangeOnceInGrainSizedChunks) {
  const int saved = NumThreads();
  for (int threads : {1, 2, 3, 8}) {
    SetNumThreads(threads);
    EXPECT_EQ(NumThreads(), threads);
    for (int64_t n : {0, 1, 7, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> bad_chunks{0};
      ParallelFor(n, 16, [&](int64_t begin, int64_t end) {
        if (begin % 16 != 0 || end - begin > 16 || end <= begin) ++bad_chunks;
        for (int64_t i = begin; i < end; ++i) ++hits[i];
      });
      EXPECT_EQ(bad_chunks.load(), 0);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
    }
  }
  SetNumThreads(saved);
}

TEST(ParallelFor, NestedCallsRunInline) {
  const int saved = NumThreads();
  SetNumThreads(4);
  std::atomic<int64_t> sum{0};
  ParallelFor(8, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      ParallelFor(10, 3, [&](int64_t b, int64_t e) {
        for (int64_t j = b; j < e; ++j) sum += i * 10 + j;
      });
  });
  EXPECT_EQ(sum.load(), 79 * 80 / 2);  // 0 .. 79
  SetNumThreads(saved);
}

TEST(ParallelFor, ManyConsecutiveJobsComplete) {
  const int saved = NumThreads();
  SetNumThreads(3);
  int64_t total = 0;
  for (int round = 0; round < 2000; ++round) {
    std::atomic<int64_t> s{0};
    ParallelFor(5, 1, [&](int64_t b, int64_t e) { s += e - b; });
    total += s.load();
  }
  EXPECT_EQ(total, 2000 * 5);
  SetNumThreads(0);  // clamped to 1
  EXPECT_EQ(NumThreads(), 1);
  SetNumThreads(saved);
}

// Slots index per-thread scratch: below the thread count, never shared by two threads at
// once, and 0 only when max_threads keeps the call on the caller.
TEST(ParallelFor, ThreadSlotsAreDistinctAndBounded) {
  const int saved = NumThreads();
  SetNumThreads(3);
  std::vector<std::atomic<int>> busy(3);
  std::atomic<int> out_of_range{0}, shared{0};
  ParallelFor(300, 1, [&](int64_t, int64_t) {
    const int slot = ThreadSlot();
    if (slot < 0 || slot >= 3) {
      ++out_of_range;
      return;
    }
    if (busy[slot].fetch_add(1) != 0) ++shared;
    for (volatile int spin = 0; spin < 1000; ++spin) {
    }
    busy[slot].fetch_sub(1);
  });
  EXPECT_EQ(out_of_range.load(), 0);
  EXPECT_EQ(shared.load(), 0);
  std::atomic<int> nonzero{0};
  ParallelFor(300, 1, [&](int64_t, int64_t) { nonzero += ThreadSlot() != 0; }, /*max_threads=*/1);
  EXPECT_EQ(nonzero.load(), 0);
  EXPECT_EQ(ThreadSlot(), 0);
  SetNumThreads(saved);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
