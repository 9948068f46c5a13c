#include "runtime/kernels/cpu/thread_scratch.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <thread>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/parallel.h"

// Counts this binary's operator new calls (ThreadScratch grows with new[]) while asked to.
namespace {
std::atomic<bool> counting{false};
std::atomic<int> news{0};
void* Counted(std::size_t n) {
  if (counting.load()) ++news;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace
void* operator new(std::size_t n) { return Counted(n); }
void* operator new[](std::size_t n) { return Counted(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace gpt_sft::runtime::kernels {
namespace {

// body(slot) on each of `threads` distinct threads: one chunk each, every chunk waiting until
// all have started, so no thread can take a second one (the pool's hand-out is otherwise chance).
template <typename Body>
void OnEveryThread(int threads, const Body& body) {
  std::atomic<int> started{0};
  ParallelFor(threads, 1, [&](int64_t, int64_t) {
    ++started;
    while (started.load() < threads) std::this_thread::yield();
    body(ThreadSlot());
  });
}

bool Aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

// The promise: one thread's request raises the site's mark, and a thread whose first request
// comes in a later ParallelFor finds its buffer grown already.
TEST(ThreadScratch, AThreadsFirstRequestInALaterParallelForDoesNotAllocate) {
  const int saved = NumThreads();
  SetNumThreads(3);
  ThreadScratch site;
  constexpr int64_t kFloats = 100000;
  OnEveryThread(3, [&](int slot) {
    if (slot == 1) site.Get<float>(kFloats)[kFloats - 1] = 1.0f;
  });
  std::atomic<int> bad{0};
  news = 0;
  counting = true;
  OnEveryThread(3, [&](int slot) {
    float* p = site.Get<float>(kFloats);
    if (!Aligned64(p)) ++bad;
    p[0] = p[kFloats - 1] = float(slot);
  });
  counting = false;
  EXPECT_EQ(news.load(), 0) << "a slot allocated on its first request, after another slot raised the mark";
  EXPECT_EQ(bad.load(), 0);
  SetNumThreads(saved);
}

// More threads than when the site last grew: the new slots are grown before the next job.
TEST(ThreadScratch, SlotsAddedByMoreThreadsAreGrownBeforeTheirFirstJob) {
  const int saved = NumThreads();
  SetNumThreads(2);
  ThreadScratch site;
  OnEveryThread(2, [&](int slot) {
    if (slot == 0) site.Get<char>(4096)[4095] = 1;
  });
  OnEveryThread(2, [](int) {});  // the growth after the raise
  SetNumThreads(4);
  OnEveryThread(4, [](int) {});  // starts the pool's new workers (a thread allocates)
  news = 0;
  counting = true;
  OnEveryThread(4, [&](int) { site.Get<char>(4096)[4095] = 2; });
  counting = false;
  EXPECT_EQ(news.load(), 0);
  SetNumThreads(saved);
}

// Outside a pool job (here: plain threads) each thread gets a buffer of its own, the same one
// each time while it is large enough, 64-byte aligned.
TEST(ThreadScratch, OutsideAPoolJobEachThreadHasItsOwnBuffer) {
  ThreadScratch site;
  float* first = nullptr;
  float* again = nullptr;
  float* other = nullptr;
  std::thread a([&] {
    first = site.Get<float>(1000);
    again = site.Get<float>(10);
  });
  a.join();
  std::thread b([&] { other = site.Get<float>(1000); });
  b.join();
  EXPECT_EQ(first, again);
  EXPECT_TRUE(Aligned64(first));
  EXPECT_TRUE(Aligned64(other));
  EXPECT_FALSE(InPoolJob());
}

TEST(ThreadScratch, InPoolJobOnlyInsideAJobThatOwnsThePool) {
  const int saved = NumThreads();
  SetNumThreads(2);
  std::atomic<int> inside{0};
  OnEveryThread(2, [&](int) { inside += InPoolJob() ? 1 : 0; });
  EXPECT_EQ(inside.load(), 2);
  EXPECT_FALSE(InPoolJob());
  SetNumThreads(1);  // one thread: inline, deterministic, not a pool job
  bool inline_job = true;
  ParallelFor(4, 1, [&](int64_t, int64_t) { inline_job = InPoolJob(); });
  EXPECT_FALSE(inline_job);
  SetNumThreads(saved);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
