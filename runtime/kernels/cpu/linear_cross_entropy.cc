// Implements the fused lm_head loss, f32/f64 and bf16, on one walk (ForEachBlockOfRows): one
// pool task per Gemm block of rows, each with its own logits block from the workspace
// (ThreadSlot), then the loss's chunk sums in order. A block whose targets are all ignored is
// not computed at all (AllIgnored): the compiled step's win on padded SFT batches, where a
// short conversation's padding fills whole blocks.
#include "runtime/kernels/cpu/linear_cross_entropy.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "runtime/kernels/cpu/cross_entropy_rows.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/permute.h"
#include "runtime/kernels/cpu/softcap_bf16.h"
#include "runtime/kernels/cpu/softcap_bf16_loss_row.h"
#include "runtime/kernels/cpu/vec_math.h"

namespace gpt_sft::runtime::kernels {
namespace {

namespace rows = cross_entropy_rows;

// The forward product's blocks (Matmul(x, w) = Gemm(false, true, N, V, C)).
int64_t BlockRows(LinearLossShape s) { return GemmBlockRows(s.N, s.V, s.C); }

/// Whether every target of rows [m0, m1) is ignored: then the block's logits need not exist.
/// It has no loss term and a zero gradient, so its rows of dy and dx are zeros, what the
/// unfused chain writes for them from finite logits. Only whole blocks are skipped: a GEMM
/// row's bits can depend on the rows beside it in the call (OpenBLAS's small-matrix kernels,
/// oneDNN's blocking by the call's shape gave other bits for calls trimmed by 16 rows), and a
/// computed block is exactly the unfused call.
bool AllIgnored(const int32_t* targets, int64_t m0, int64_t m1) {
  for (int64_t n = m0; n < m1; ++n) {
    if (targets[n] >= 0) return false;
  }
  return true;
}

/// The fused loss's walk, whatever its products: one pool task per Gemm block of rows (at most
/// `slots` at once), `zero(m0, m1)` for a block whose targets are all ignored, else
/// `rows(m0, m1, add)` which hands each counted row's loss term to add(n, term) in row order;
/// the terms summed per 16-row chunk, then the chunks in order, as the unfused loss does, and
/// their mean over the `count` counted targets returned.
template <typename Zero, typename Rows>
CrossEntropyResult ForEachBlockOfRows(LinearLossShape s, const int32_t* targets, int64_t count, double* partial,
                                      int slots, const Zero& zero, const Rows& rows_of_block) {
  ParallelFor(
      s.N, BlockRows(s),
      [&](int64_t m0, int64_t m1) {
        for (int64_t c0 = m0; c0 < m1; c0 += rows::kRowsPerChunk) partial[c0 / rows::kRowsPerChunk] = 0;
        if (AllIgnored(targets, m0, m1)) return zero(m0, m1);
        rows_of_block(m0, m1, [&](int64_t n, double term) { partial[n / rows::kRowsPerChunk] += term; });
      },
      std::max(1, slots));
  double sum = 0;
  for (int64_t c = 0; c < rows::Chunks(s.N); ++c) sum += partial[c];
  return {count > 0 ? sum / count : 0.0, count};
}

/// w [V, C] transposed into wt [C, V], as the unfused step's transpose makes it.
template <typename T>
void Transpose(const T* w, int64_t V, int64_t C, T* wt) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const int64_t dims[] = {V, C}, perm[] = {1, 0};
  Permute<Bits>(reinterpret_cast<const Bits*>(w), reinterpret_cast<Bits*>(wt), dims, perm, 2);
}

// The workspace in carving order: the loss's chunk sums, w's transpose, then one logits block
// per thread.
template <typename T>
struct Carved {
  double* partial;
  T* wt;
  T* blocks;
  int64_t block_elements;
  int slots;
  Carved(LinearLossShape s, WorkspaceCarver& carver) {
    partial = carver.Take<double>(rows::Chunks(s.N), "lm_head loss partial sums");
    wt = carver.Take<T>(s.C * s.V, "lm_head weight's transpose");
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
CrossEntropyResult LinearSoftcapCrossEntropyWithGrad(const T* x, const T* w, const int32_t* targets,
                                                     LinearLossShape s, T cap, double dloss, T* dy, T* dx,
                                                     Workspace workspace) {
  const int64_t N = s.N, V = s.V, C = s.C;
  WorkspaceCarver carver(workspace);
  const Carved<T> ws(s, carver);
  const int64_t count = rows::CountTargets(targets, N);
  const double scale = count > 0 ? dloss / count : 0.0;
  // dx = dy (w^T)^T is Gemm(false, true, N, C, V) on w's transpose, made here as the unfused
  // step makes it (OpenBLAS's small-matrix kernels sum dy w in another order): its blocks ride
  // along when they are the same.
  T* const wt = ws.wt;
  Transpose(w, V, C, wt);
  const bool dx_per_block = GemmBlockRows(N, C, V) == BlockRows(s);
  const CrossEntropyResult result = ForEachBlockOfRows(
      s, targets, count, ws.partial, ws.slots,
      [&](int64_t m0, int64_t m1) {
        std::fill(dy + m0 * V, dy + m1 * V, T(0));
        if (dx_per_block) std::fill(dx + m0 * C, dx + m1 * C, T(0));
      },
      [&](int64_t m0, int64_t m1, const auto& add) {
        T* logits = ws.blocks + ThreadSlot() * ws.block_elements;  // row n at logits + (n - m0) V
        GemmBlock<T>(false, true, m1 - m0, V, C, T(1), x + m0 * C, C, w, C, T(0), logits, V);
        for (int64_t n = m0; n < m1; ++n) {
          T* y = logits + (n - m0) * V;
          ScaledTanh(y, V, T(1) / cap, cap, y);  // softcap's arithmetic, in place
          if (targets[n] >= 0) {
            add(n, rows::SoftcapRowLossAndGrad(y, targets[n], V, scale, cap, dy + n * V));
          } else {
            rows::SoftcapRowGrad(y, targets[n], V, scale, cap, dy + n * V);
          }
        }
        if (dx_per_block) GemmBlock<T>(false, true, m1 - m0, C, V, T(1), dy + m0 * V, V, wt, V, T(0), dx + m0 * C, C);
      });
  if (!dx_per_block) Gemm<T>(false, true, N, C, V, T(1), dy, V, wt, V, T(0), dx, C);
  return result;
}

namespace {

// The bf16 chain's workspace: the loss's chunk sums, w prepared for the kernel once (on onednn
// both products read it: [V, C] compact is op(B) of x w^T and B of dy w; on amx w is packed
// for each product; on fp32 w's transpose too, prepared), then per thread a logits block and
// a gradient row (where dy is written prepared).
struct CarvedBf16 {
  double* partial;
  void* w;
  void* wt = nullptr;
  float* blocks;
  float* grad_rows;
  void* block_rows = nullptr;  // dy in slabs: each thread's block of prepared rows
  int64_t block_elements;
  int slots;
  CarvedBf16(Bf16Gemm kernel, LinearLossShape s, WorkspaceCarver& carver) {
    partial = carver.Take<double>(rows::Chunks(s.N), "lm_head loss partial sums");
    const int64_t w_bytes = Bf16GemmB::StorageBytes(kernel, s.V, s.C);
    w = carver.Take<uint8_t>(w_bytes, "lm_head weight prepared for bf16 products");
    if (kernel == Bf16Gemm::kFp32) wt = carver.Take<uint8_t>(w_bytes, "lm_head weight's transpose prepared");
    if (kernel == Bf16Gemm::kAmx) {
      wt = carver.Take<uint8_t>(Bf16GemmB::StorageBytes(kernel, s.C, s.V), "lm_head weight packed for dx's product");
    }
    block_elements = std::min(BlockRows(s), s.N) * s.V;
    const int64_t element = Bf16PreparedElementBytes(kernel);
    const int64_t bytes = (block_elements + s.V) * static_cast<int64_t>(sizeof(float)) + block_elements * element;
    slots = carver.counting() ? NumThreads() : static_cast<int>(std::min<int64_t>(NumThreads(), carver.left() / bytes));
    blocks = carver.Take<float>(block_elements * std::max(1, slots), "lm_head logits blocks");
    grad_rows = carver.Take<float>(s.V * std::max(1, slots), "lm_head gradient rows");
    block_rows = carver.Take<uint8_t>(block_elements * element * std::max(1, slots), "lm_head prepared gradient rows");
  }
};

}  // namespace

int64_t LinearSoftcapBf16CrossEntropyWorkspaceBytes(Bf16Gemm kernel, LinearLossShape s) {
  WorkspaceCarver count;
  CarvedBf16(kernel, s, count);
  return count.used();
}

namespace {

/// A row's piece of a slab (a few hundred bytes, tens of thousands of them a block): copied
/// in 64-byte steps the compiler inlines, which a call to memcpy per piece cost more than.
inline void CopyPiece(char* to, const char* from, int64_t bytes) {
  int64_t i = 0;
  for (; i + 64 <= bytes; i += 64) __builtin_memcpy(to + i, from + i, 64);
  if (i < bytes) std::memcpy(to + i, from + i, bytes - i);
}

}  // namespace

CrossEntropyResult LinearSoftcapBf16CrossEntropyWithGrad(Bf16Gemm kernel, const float* x, const float* w,
                                                         const int32_t* targets, LinearLossShape s,
                                                         float cap, double dloss, void* dy, LinearLossDy dy_layout,
                                                         float* dx, Workspace workspace) {
  const bool dy_prepared = dy_layout != LinearLossDy::kF32, in_slabs = dy_layout == LinearLossDy::kPreparedSlabs;
  const int64_t N = s.N, V = s.V, C = s.C;
  WorkspaceCarver carver(workspace);
  const CarvedBf16 ws(kernel, s, carver);
  const int64_t count = rows::CountTargets(targets, N);
  const double scale = count > 0 ? dloss / count : 0.0;
  const float* table = SoftcapBf16Table(cap);
  const int64_t element = Bf16PreparedElementBytes(kernel);
  const int64_t dy_element = dy_prepared ? element : static_cast<int64_t>(sizeof(float));
  float* const dy_f32 = dy_prepared ? nullptr : static_cast<float*>(dy);
  char* const dy_bytes = static_cast<char*>(dy);
  // The unfused products: logits = x w^T (GemmBf16Inputs(false, true, N, V, C)) and dx = dy
  // (w^T)^T (GemmBf16Inputs(false, true, N, C, V) on w's transpose), each B prepared once. On
  // onednn dx's B is w's prepared copy itself, read as B [V, C] (dy w): oneDNN packs op(B) the
  // same either way, so the same bits (linear_cross_entropy_test) without the transpose; on amx
  // w is packed a second time, as B [V, C] (its sums follow op(B), not its layout). On fp32
  // the transpose is made here, as the unfused step makes it: OpenBLAS's small-matrix kernels
  // sum dy w in another order.
  const Bf16GemmB w_b(kernel, /*trans_b=*/true, V, C, w, C, ws.w);
  const Bf16GemmB dx_b = [&] {
    if (kernel == Bf16Gemm::kOneDnn) return Bf16GemmB::OfPrepared(kernel, /*trans_b=*/false, C, V, ws.w, C, nullptr);
    if (kernel == Bf16Gemm::kAmx) return Bf16GemmB(kernel, /*trans_b=*/false, C, V, w, C, ws.wt);  // B [V, C]
    float* wt = static_cast<float*>(ws.wt);
    Transpose(w, V, C, wt);
    return Bf16GemmB(kernel, /*trans_b=*/true, C, V, wt, V, ws.wt);  // rounded in place
  }();
  const bool dx_per_block = GemmBlockRows(N, C, V) == BlockRows(s);
  // dx's rows [m0, m1), from dy's prepared rows (in dy, or in the thread's block of them) or f32.
  auto dx_rows = [&](int64_t m0, int64_t m1) {
    if (!dy_prepared) {
      return dx_b.MultiplyRows(false, m0, m1, dy_f32, V, /*accumulate=*/false, dx + m0 * C, C, /*round_output=*/false);
    }
    const char* a_rows = in_slabs ? static_cast<const char*>(ws.block_rows) + ThreadSlot() * ws.block_elements * element
                                  : dy_bytes + m0 * V * element;
    dx_b.MultiplyPreparedRows(false, m0, m1, a_rows, V, /*accumulate=*/false, dx + m0 * C, C, /*round_output=*/false);
  };
  // In slabs: each block's prepared rows are gathered in ws.block_rows for dx's product (the
  // same compact rows it reads from a row-major dy), each copied into its slabs as it is made.
  if (in_slabs && (!dx_per_block || ws.block_rows == nullptr)) {
    std::fprintf(stderr, "linear_softcap_bf16_cross_entropy_grad: dy in slabs needs dx's blocks to be the logits'\n");
    std::abort();
  }
  // Rows narrowed as they are computed where dy is stored as bf16 bit patterns (amx, onednn).
  const bool narrowed_rows = dy_prepared && Bf16GemmReadsBits(kernel) && SoftcapBf16LossRowFused();
  const Bf16DySlabs slabs = Bf16DySlabs::Of(N, V, C);
  auto to_slabs = [&](int64_t n, const char* row) {  // row n: V prepared elements
    for (int64_t v0 = 0; v0 < V; v0 += slabs.width) {
      const int64_t bytes = slabs.SlabWidth(v0) * element;
      CopyPiece(dy_bytes + slabs.SlabStart(v0) * element + n * bytes, row + v0 * element, bytes);
    }
  };
  const CrossEntropyResult result = ForEachBlockOfRows(
      s, targets, count, ws.partial, ws.slots,
      [&](int64_t m0, int64_t m1) {  // zeros, prepared or not, are all-zero bytes
        if (in_slabs) {
          for (int64_t v0 = 0; v0 < V; v0 += slabs.width) {
            const int64_t width = slabs.SlabWidth(v0);
            char* slab = dy_bytes + slabs.SlabStart(v0) * element;
            std::fill(slab + m0 * width * element, slab + m1 * width * element, char(0));
          }
        } else {
          std::fill(dy_bytes + m0 * V * dy_element, dy_bytes + m1 * V * dy_element, char(0));
        }
        if (dx_per_block) std::fill(dx + m0 * C, dx + m1 * C, 0.0f);
      },
      [&](int64_t m0, int64_t m1, const auto& add) {
        float* logits = ws.blocks + ThreadSlot() * ws.block_elements;  // row n at logits + (n - m0) V
        float* grad_row = ws.grad_rows + ThreadSlot() * V;
        // The block's prepared rows: in dy (row-major), or in this thread's block of rows (slabs).
        char* block_rows = in_slabs ? static_cast<char*>(ws.block_rows) + ThreadSlot() * ws.block_elements * element
                                    : dy_bytes + m0 * V * element;
        w_b.MultiplyRows(false, m0, m1, x, C, /*accumulate=*/false, logits, V, /*round_output=*/false);
        for (int64_t n = m0; n < m1; ++n) {
          float* y = logits + (n - m0) * V;
          float* grad = dy_prepared ? grad_row : dy_f32 + n * V;
          char* const prepared_row = block_rows + (n - m0) * V * element;
          if (narrowed_rows && targets[n] >= 0) {  // the same bits in three passes over the row
            const float m = SoftcapBf16InPlaceWithMax(table, y, V);
            auto* dy_row = reinterpret_cast<uint16_t*>(prepared_row);
            add(n, SoftcapBf16RowLossAndNarrowedGrad(y, m, targets[n], V, scale, cap, grad_row, dy_row));
          } else {
            SoftcapBf16Range(table, y, V, cap, /*round_input=*/true, y);  // the logits' rounding, then the softcap
            if (targets[n] >= 0) {
              add(n, rows::SoftcapBf16RowLossAndGrad(y, targets[n], V, scale, cap, grad));
            } else {
              rows::SoftcapBf16RowGrad(y, targets[n], V, scale, cap, grad);
            }
            if (dy_prepared) PrepareBf16Operand(kernel, grad, V, prepared_row);  // while in cache
          }
          if (in_slabs) to_slabs(n, prepared_row);  // its pieces, from cache
        }
        if (dx_per_block) dx_rows(m0, m1);
      });
  if (!dx_per_block) ForEachGemmBlock(N, C, V, dx_rows);
  return result;
}

#define INSTANTIATE(T)                                                                                            \
  template CrossEntropyResult LinearSoftcapCrossEntropyWithGrad<T>(const T*, const T*, const int32_t*,          \
                                                                   LinearLossShape, T, double, T*, T*, Workspace);  \
  template int64_t LinearSoftcapCrossEntropyWorkspaceBytes<T>(LinearLossShape);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

}  // namespace gpt_sft::runtime::kernels
