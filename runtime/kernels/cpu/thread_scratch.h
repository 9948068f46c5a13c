// Per-thread scratch for the kernels' ParallelFor bodies that stops allocating after a
// static-shape step's first run, on any number of threads.
//
// Why not a thread_local buffer: the pool hands chunks out dynamically, so which pool thread
// first runs a chunk of a given kernel is chance; a thread_local grown on that first chunk
// can grow in the tenth step as well as the first (three threads, bf16: 3 to 11 one-time
// allocations in a step's second run). Here each site keeps one buffer per pool slot
// (ThreadSlot()) and its high-water mark; when a request raises the mark, the pool grows
// every slot's buffer to it once the running ParallelFor is over (parallel.cc calls
// GrowSlotsIfRaised while it owns the pool, so no body holds a slot's buffer then).
// After the step's first run every slot has what any chunk of it asks for.
//
// A request made outside a pool job (a kernel's serial part, a ParallelFor run inline
// because another thread owns the pool) gets a thread_local buffer: which thread makes it
// is not left to chance, so it too grows in the first run only. Slots past kMaxSlots use
// those as well.
//
// Contents do not survive: a buffer is scratch for the body that asked for it, valid until
// that body returns (the same site asked again on the same thread may move it).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_THREAD_SCRATCH_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_THREAD_SCRATCH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gpt_sft::runtime::kernels {

/// One call site's scratch: declare it `static` where the thread_local buffer would be (an
/// object that dies takes its slots with it; threads' own buffers for it stay until they exit).
class ThreadScratch {
 public:
  static constexpr int kMaxSlots = 256;

  ThreadScratch();
  ~ThreadScratch();
  ThreadScratch(const ThreadScratch&) = delete;
  ThreadScratch& operator=(const ThreadScratch&) = delete;

  /// At least `n` elements of T for the running thread, 64-byte aligned, uninitialised.
  template <typename T>
  T* Get(int64_t n) {
    return static_cast<T*>(Bytes(n * static_cast<int64_t>(sizeof(T))));
  }

  /// Grows slots [0, slots) of every site to its high-water mark if a request raised one
  /// since the last call, or if `slots` is more than last time. Only while no pool job runs
  /// (parallel.cc, owning the pool).
  static void GrowSlotsIfRaised(int slots);

 private:
  struct Buffer {
    std::unique_ptr<std::byte[]> storage;
    int64_t bytes = 0;
    void* Aligned() const;
    void GrowTo(int64_t bytes);
  };

  void* Bytes(int64_t bytes);
  void GrowSlots(int slots);

  std::unique_ptr<Buffer[]> slots_;
  std::atomic<int64_t> high_water_{0};
};

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_THREAD_SCRATCH_H_
