// Implements the fused lm_head loss: one pool task per Gemm block of rows, each with its own
// logits block from the workspace (ThreadSlot), then the loss's chunk sums in order.
#include "runtime/kernels/cpu/linear_cross_entropy.h"

#include <algorithm>

#include "runtime/kernels/cpu/cross_entropy_rows.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/vec_math.h"

namespace gpt_sft::runtime::kernels {
namespace {

namespace rows = cross_entropy_rows;

// The forward product's blocks (Matmul(x, w) = Gemm(false, true, N, V, C)).
int64_t BlockRows(LinearLossShape s) { return GemmBlockRows(s.N, s.V, s.C); }

// The workspace in carving order: the loss's chunk sums, then one logits block per thread.
template <typename T>
struct Carved {
  double* partial;
  T* blocks;
  int64_t block_elements;
  int slots;
  Carved(LinearLossShape s, WorkspaceCarver& carver) {
    partial = carver.Take<double>(rows::Chunks(s.N), "lm_head loss partial sums");
    block_elements = std::min(BlockRows(s), s.N) * s.V;
    const int64_t bytes = block_elements * static_cast<int64_t>(sizeof(T));
    slots = carver.counting() ? NumThreads() : static_cast<int>(std::min<int64_t>(NumThreads(), carver.left() / bytes));
    blocks = carver.Take<T>(block_elements * std::max(1, slots), "lm_head logits blocks");
  }
};

}  // namespace

template <typename T>
int64_t LinearSoftcapCrossEntropyWorkspaceBytes(LinearLossShape s) {
  WorkspaceCarver count;
  Carved<T>(s, count);
  return count.used();
}

template <typename T>
CrossEntropyResult LinearSoftcapCrossEntropyWithGrad(const T* x, const T* w, const T* wt, const int32_t* targets,
                                                     LinearLossShape s, T cap, double dloss, T* dy, T* dx,
                                                     Workspace workspace) {
  const int64_t N = s.N, V = s.V, C = s.C;
  WorkspaceCarver carver(workspace);
  const Carved<T> ws(s, carver);
  const int64_t count = rows::CountTargets(targets, N);
  const double scale = count > 0 ? dloss / count : 0.0;
  // dx = dy wt^T is Gemm(false, true, N, C, V): its blocks ride along when they are the same.
  const bool dx_per_block = GemmBlockRows(N, C, V) == BlockRows(s);
  ParallelFor(
      N, BlockRows(s),
      [&](int64_t m0, int64_t m1) {
        T* logits = ws.blocks + ThreadSlot() * ws.block_elements;
        GemmBlock<T>(false, true, m1 - m0, V, C, T(1), x + m0 * C, C, w, C, T(0), logits, V);
        for (int64_t c0 = m0; c0 < m1; c0 += rows::kRowsPerChunk) {
          double sum = 0;
          for (int64_t n = c0; n < std::min(m1, c0 + rows::kRowsPerChunk); ++n) {
            T* y = logits + (n - m0) * V;
            ScaledTanh(y, V, T(1) / cap, cap, y);  // softcap's arithmetic, in place
            if (targets[n] >= 0) {
              sum += rows::SoftcapRowLossAndGrad(y, targets[n], V, scale, cap, dy + n * V);
            } else {
              rows::SoftcapRowGrad(y, targets[n], V, scale, cap, dy + n * V);
            }
          }
          ws.partial[c0 / rows::kRowsPerChunk] = sum;
        }
        if (dx_per_block) GemmBlock<T>(false, true, m1 - m0, C, V, T(1), dy + m0 * V, V, wt, V, T(0), dx + m0 * C, C);
      },
      std::max(1, ws.slots));
  if (!dx_per_block) Gemm<T>(false, true, N, C, V, T(1), dy, V, wt, V, T(0), dx, C);
  double sum = 0;
  for (int64_t c = 0; c < rows::Chunks(N); ++c) sum += ws.partial[c];
  return {count > 0 ? sum / count : 0.0, count};
}

#define INSTANTIATE(T)                                                                                            \
  template CrossEntropyResult LinearSoftcapCrossEntropyWithGrad<T>(const T*, const T*, const T*, const int32_t*, \
                                                                   LinearLossShape, T, double, T*, T*, Workspace);  \
  template int64_t LinearSoftcapCrossEntropyWorkspaceBytes<T>(LinearLossShape);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

}  // namespace gpt_sft::runtime::kernels
