// The kernels' one way to use several cores: a persistent pool of std::threads and a
// blocking ParallelFor over an index range. The calling thread takes part, so
// NumThreads() == 1 runs everything inline with no thread switch.
//
// Work is handed out in chunks of `grain` indices from a shared atomic counter, so uneven
// items (causal attention blocks) balance themselves; callers that need bit-identical
// results regardless of the thread count must make each index's result independent of
// which thread runs it (every kernel here does: no reduction crosses indices).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_PARALLEL_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_PARALLEL_H_

#include <cstdint>
#include <functional>

namespace gpt_sft::runtime::kernels {

/// Threads the kernels use, the caller included. Defaults to the hardware's cores.
int NumThreads();

/// Sets the kernels' thread count (>= 1; smaller values are taken as 1): the one knob for
/// every kernel, BLAS included (the pool keeps OpenBLAS itself single-threaded and splits
/// GEMMs over its own threads; see matmul.h). Not to be called while a kernel runs.
void SetNumThreads(int n);

/// Calls body(begin, end) on disjoint chunks covering [0, n), chunk length `grain`
/// (the last may be shorter), on up to NumThreads() threads; returns when all are done.
/// A ParallelFor issued from inside a body, or while another thread's ParallelFor holds
/// the pool, runs inline on the calling thread (correct, just not parallel).
void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& body);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_PARALLEL_H_
