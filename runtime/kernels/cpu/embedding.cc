// Implements the embedding gather (parallel over tokens) and its scatter-add VJP (parallel
// over column ranges, so no two threads touch one row element and every element's sum is
// taken in token order whatever the thread count).
#include "runtime/kernels/cpu/embedding.h"

#include <cstring>

#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {

template <typename T>
void Embedding(const T* table, const int32_t* ids, T* out, int64_t N, int64_t C) {
  ParallelFor(N, 256, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) std::memcpy(out + n * C, table + int64_t{ids[n]} * C, C * sizeof(T));
  });
}

template <typename T>
void EmbeddingGrad(const T* dout, const int32_t* ids, T* dtable, int64_t N, int64_t C) {
  ParallelFor(C, 64, [&](int64_t c0, int64_t c1) {
    for (int64_t n = 0; n < N; ++n) {
      T* row = dtable + int64_t{ids[n]} * C;
      for (int64_t c = c0; c < c1; ++c) row[c] += dout[n * C + c];
    }
  });
}

template void Embedding<float>(const float*, const int32_t*, float*, int64_t, int64_t);
template void Embedding<double>(const double*, const int32_t*, double*, int64_t, int64_t);
template void EmbeddingGrad<float>(const float*, const int32_t*, float*, int64_t, int64_t);
template void EmbeddingGrad<double>(const double*, const int32_t*, double*, int64_t, int64_t);

}  // namespace gpt_sft::runtime::kernels
