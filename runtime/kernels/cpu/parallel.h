// The kernels' one way to use several cores: a persistent pool of std::threads and a
// blocking ParallelFor over an index range. The calling thread takes part, so
// NumThreads() == 1 runs everything inline with no thread switch.
//
// Work is handed out in chunks of `grain` indices from a shared atomic counter, so uneven
// items (causal attention blocks) balance themselves; callers that need bit-identical
// results regardless of the thread count must make each index's result independent of
// which thread runs it (every kernel here does: no reduction crosses indices).
//
// Nothing here allocates per call: the body is passed as a ChunkBody (a reference to the
// caller's callable, not a copy), and ThreadSlot() lets a body use a per-thread slice of
// scratch memory its caller provides (workspace.h).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_PARALLEL_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_PARALLEL_H_

#include <cstdint>
#include <type_traits>
#include <utility>

namespace gpt_sft::runtime::kernels {

/// Threads the kernels use, the caller included. Defaults to the hardware's cores.
int NumThreads();

/// Sets the kernels' thread count (>= 1; smaller values are taken as 1): the one knob for
/// every kernel, BLAS included (the pool keeps OpenBLAS itself single-threaded and splits
/// GEMMs over its own threads; see matmul.h). Not to be called while a kernel runs.
void SetNumThreads(int n);

/// A non-owning reference to a callable `void(int64_t begin, int64_t end)`: two pointers,
/// never a heap copy (std::function copies a lambda of more than 16 bytes to the heap).
/// Valid while the callable it was made from lives: pass it down, do not store it.
class ChunkBody {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, ChunkBody>>>
  ChunkBody(F&& f)  // NOLINT(google-explicit-constructor): lambdas convert at the call site
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* object, int64_t begin, int64_t end) {
          (*static_cast<std::remove_reference_t<F>*>(object))(begin, end);
        }) {}

  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, int64_t, int64_t);
};

/// Calls body(begin, end) on disjoint chunks covering [0, n), chunk length `grain`
/// (the last may be shorter), on up to min(NumThreads(), max_threads) threads; returns
/// when all are done. A ParallelFor issued from inside a body, or while another thread's
/// ParallelFor holds the pool, runs inline on the calling thread (correct, just not
/// parallel).
void ParallelFor(int64_t n, int64_t grain, ChunkBody body, int max_threads = 1 << 30);

/// Inside a ParallelFor body: the running thread's slot, distinct among the threads that
/// run that ParallelFor's chunks and below min(NumThreads(), max_threads) at its start (the
/// caller is 0, the pool's worker i is i + 1). Outside any body: 0. A kernel sizes its
/// per-thread scratch for NumThreads() slots, or passes the slots it has as max_threads.
int ThreadSlot();

/// True inside a body of a ParallelFor that owns the pool, on its caller or a worker (and in
/// ParallelFors nested there): ThreadSlot() is then held by no other running thread. False
/// elsewhere, e.g. in a ParallelFor run inline because another thread owns the pool.
bool InPoolJob();

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_PARALLEL_H_
