// Implements Permute (permute.h).
#include "runtime/kernels/cpu/permute.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {

template <typename E>
void Permute(const E* in, E* out, const int64_t* in_dims, const int64_t* perm, int rank) {
  using Dims = std::array<int64_t, kMaxPermuteRank>;
  Dims in_stride{}, out_dims{}, src_stride{}, out_stride{};
  in_stride[rank - 1] = 1;
  for (int i = rank - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * in_dims[i + 1];
  for (int i = 0; i < rank; ++i) {
    out_dims[i] = in_dims[perm[i]];
    src_stride[i] = in_stride[perm[i]];
  }
  out_stride[rank - 1] = 1;
  for (int i = rank - 2; i >= 0; --i) out_stride[i] = out_stride[i + 1] * out_dims[i + 1];
  const int last = rank - 1;
  // q: the output dim the input's innermost dim goes to. Tiles of (q, last) keep both the
  // reads and the writes in cache lines; the other dims are enumerated by `outer`.
  const int q = static_cast<int>(std::find(perm, perm + rank, int64_t(last)) - perm);
  Dims others{};
  int num_others = 0;
  int64_t outer = 1;
  for (int i = 0; i < last; ++i) {
    if (i != q) {
      others[num_others++] = i;
      outer *= out_dims[i];
    }
  }
  constexpr int64_t kTile = 32;
  const int64_t a_len = q == last ? 1 : out_dims[q];
  const int64_t a_tiles = (a_len + kTile - 1) / kTile;
  const int64_t b_len = out_dims[last];
  ParallelFor(outer * a_tiles, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      int64_t rest = task / a_tiles, src = 0, dst = 0;
      for (int j = num_others - 1; j >= 0; --j) {
        const int64_t d = others[j], idx = rest % out_dims[d];
        rest /= out_dims[d];
        src += idx * src_stride[d];
        dst += idx * out_stride[d];
      }
      if (q == last) {
        std::memcpy(out + dst, in + src, b_len * sizeof(E));
        continue;
      }
      const int64_t a0 = (task % a_tiles) * kTile, a1 = std::min(a_len, a0 + kTile);
      for (int64_t b0 = 0; b0 < b_len; b0 += kTile) {
        const int64_t b1 = std::min(b_len, b0 + kTile);
        for (int64_t a = a0; a < a1; ++a) {
          for (int64_t b = b0; b < b1; ++b) out[dst + a * out_stride[q] + b] = in[src + a + b * src_stride[last]];
        }
      }
    }
  });
}

template void Permute<uint32_t>(const uint32_t*, uint32_t*, const int64_t*, const int64_t*, int);
template void Permute<uint64_t>(const uint64_t*, uint64_t*, const int64_t*, const int64_t*, int);

}  // namespace gpt_sft::runtime::kernels
