// Implements the pool: workers wait until a job's generation number changes, then pull
// chunks from the job's atomic counter like the caller does. A step is a few hundred
// ParallelFors back to back with short serial gaps between them, and waking a thread blocked
// on a condition variable costs tens of microseconds (more in a VM), so both sides spin for a
// while on the atomics first (kSpins rounds, about a millisecond) and only then block: a worker
// waiting for the next job, and the caller waiting for the workers' last chunks.
#include "runtime/kernels/cpu/parallel.h"

#include <cblas.h>
#if defined(__x86_64__) || defined(__i386__)
#endif

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/kernels/cpu/thread_scratch.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

thread_local bool in_parallel_body = false;
thread_local int thread_slot = 0;  // worker i: i + 1 (WorkerLoop)
thread_local bool in_pool_job = false;  // running chunks of the job that owns the pool

constexpr int kSpins = 32768;

/// Spins until done() or kSpins rounds have passed; returns done(). Every 64th round yields
/// the core instead of pausing, so that where more threads are runnable than there are cores
/// (several ranks' processes on one machine) the spinning thread gives its core to them.
template <typename Done>
bool SpinUntil(const Done& done) {
  for (int i = 0; i < kSpins; ++i) {
    if (done()) return true;
    if (i % 64 == 63) {
      std::this_thread::yield();
    } else {
#if defined(__x86_64__) || defined(__i386__)
      _mm_pause();
#endif
    }
  }
  return done();
}

class Pool {
 public:
  static Pool& Get() {
    static Pool* pool = new Pool();  // never destroyed: workers may outlive static teardown
    return *pool;
  }

  int threads() const { return threads_.load(); }
  void set_threads(int n) { threads_.store(std::max(1, n)); }

  void Run(int64_t n, int64_t grain, ChunkBody body, int max_threads) {
    const int64_t chunks = (n + grain - 1) / grain;
    const int want = static_cast<int>(std::min<int64_t>(std::min(threads(), max_threads), chunks));
    // Nested: inline, before any try_lock (the caller's thread may own run_mutex_ already, and
    // try_lock on a std::mutex the thread owns is undefined).
    if (want <= 1 || in_parallel_body) {
      RunChunks(n, grain, body, nullptr);
      return;
    }
    std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) {
      RunChunks(n, grain, body, nullptr);
      return;
    }
    EnsureWorkers(want - 1);
    // Between jobs no body holds a slot's scratch: grow them here (thread_scratch.h).
    ThreadScratch::GrowSlotsIfRaised(threads());
    std::atomic<int64_t> next{0};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = {&body, n, grain, &next, want - 1};
      pending_.store(want - 1);
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    RunChunks(n, grain, body, &next);
    if (!SpinUntil([&] { return pending_.load() == 0; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return pending_.load() == 0; });
    }
    ThreadScratch::GrowSlotsIfRaised(threads());
  }

 private:
  struct Job {
    const ChunkBody* body = nullptr;  // the caller's, alive until its Run returns
    int64_t n = 0, grain = 1;
    std::atomic<int64_t>* next = nullptr;
    int workers = 0;  // how many of the pool's workers take part
  };

  // OpenBLAS runs single-threaded inside pool chunks (matmul.h says why).
  Pool() : threads_(std::max(1u, std::thread::hardware_concurrency())) { openblas_set_num_threads(1); }

  // `next` null: inline, on the calling thread alone (in a pool job if the caller is in one).
  static void RunChunks(int64_t n, int64_t grain, ChunkBody body, std::atomic<int64_t>* next) {
    const bool outer = in_parallel_body, outer_job = in_pool_job;
    in_parallel_body = true;
    if (next == nullptr) {
      for (int64_t b = 0; b < n; b += grain) body(b, std::min(n, b + grain));
    } else {
      in_pool_job = true;
      for (int64_t b; (b = next->fetch_add(grain)) < n;) body(b, std::min(n, b + grain));
    }
    in_parallel_body = outer;
    in_pool_job = outer_job;
  }

  void EnsureWorkers(int count) {
    while (static_cast<int>(workers_.size()) < count) {
      const int index = static_cast<int>(workers_.size());
      workers_.emplace_back([this, index] { WorkerLoop(index); });
      workers_.back().detach();
    }
  }

  void WorkerLoop(int index) {
    thread_slot = index + 1;
    uint64_t seen = 0;
    for (;;) {
      Job job;
      SpinUntil([&] { return generation_.load() != seen; });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
        seen = generation_.load();
        if (index >= job_.workers) continue;
        job = job_;
      }
      RunChunks(job.n, job.grain, *job.body, job.next);
      if (pending_.fetch_sub(1) == 1) {  // the last: wake the caller if it blocked
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_one();
      }
    }
  }

  std::atomic<int> threads_;
  std::mutex run_mutex_;  // one ParallelFor at a time owns the workers
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  Job job_;
  std::atomic<int> pending_{0};
  std::atomic<uint64_t> generation_{0};
  std::vector<std::thread> workers_;  // grows in EnsureWorkers only (the first big job)
};

}  // namespace

int NumThreads() { return Pool::Get().threads(); }

void SetNumThreads(int n) { Pool::Get().set_threads(n); }

void ParallelFor(int64_t n, int64_t grain, ChunkBody body, int max_threads) {
  if (n <= 0) return;
  Pool::Get().Run(n, std::max<int64_t>(1, grain), body, std::max(1, max_threads));
}

int ThreadSlot() { return thread_slot; }

bool InPoolJob() { return in_pool_job; }

}  // namespace gpt_sft::runtime::kernels
