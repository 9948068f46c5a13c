// Transpose of a row-major tensor: out = in with its dims permuted (out dim i = in dim
// perm[i]), for 4- and 8-byte elements. Tiled 32x32 over the two dims that move the innermost
// index, work split over the pool (parallel.h); no heap allocation (ranks up to kMaxPermuteRank).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_PERMUTE_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_PERMUTE_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

inline constexpr int kMaxPermuteRank = 8;

/// `in_dims` and `perm` have `rank` entries (1 <= rank <= kMaxPermuteRank); E is uint32_t or
/// uint64_t (the bits are moved, not interpreted).
template <typename E>
void Permute(const E* in, E* out, const int64_t* in_dims, const int64_t* perm, int rank);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_PERMUTE_H_
