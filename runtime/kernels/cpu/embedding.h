// Token embedding: out[N, C] = table[ids[N], :]; its VJP scatter-adds rows into dtable.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_EMBEDDING_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_EMBEDDING_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

template <typename T> void Embedding(const T* table, const int32_t* ids, T* out, int64_t N, int64_t C);
/// dtable[ids[n]] += dout[n] (dtable is not cleared: accumulate across micro-steps).
template <typename T> void EmbeddingGrad(const T* dout, const int32_t* ids, T* dtable, int64_t N, int64_t C);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_EMBEDDING_H_
