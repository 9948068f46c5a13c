// Implements MuonGroupUpdate: whole matrices as pool tasks (each running MuonUpdate, whose
// own parallel loops then run on the task's thread), or one matrix after another when the
// group is smaller than the pool.
#include "runtime/kernels/cpu/muon_group.h"

#include <algorithm>

#include "runtime/kernels/cpu/optimizers.h"
#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {

int MuonGroupSlots(int64_t count, int threads) { return count >= threads && threads > 1 ? threads : 1; }

int64_t MuonGroupSlotStride(int64_t rows, int64_t cols, int64_t element_bytes) {
  constexpr int64_t kLine = 64;
  const int64_t bytes = MuonScratchSize(rows, cols) * element_bytes;
  return (bytes + kLine - 1) / kLine * kLine / element_bytes;
}

template <typename T>
void MuonGroupUpdate(const MuonGroupMatrix<T>* matrices, int64_t count, int64_t rows, int64_t cols, double momentum,
                     bool newton_schulz_bf16, T* scratch, int slots) {
  auto update = [&](int64_t i, T* own_scratch) {
    const MuonGroupMatrix<T>& m = matrices[i];
    MuonUpdate(m.param, m.momentum_buffer, m.grad, rows, cols, MuonHyper{m.lr, momentum, newton_schulz_bf16},
               own_scratch);
  };
  if (slots <= 1 || count < 2) {
    for (int64_t i = 0; i < count; ++i) update(i, scratch);
    return;
  }
  const int64_t stride = MuonGroupSlotStride(rows, cols, sizeof(T));
  ParallelFor(
      count, 1,
      [&](int64_t begin, int64_t end) {
        // ThreadSlot() < slots when the pool runs this loop (max_threads below). It is another
        // number only when the loop runs inline on a pool worker (called from inside a
        // ParallelFor body): then that one thread runs every matrix, so one slot serves.
        T* own_scratch = scratch + std::min(ThreadSlot(), slots - 1) * stride;
        for (int64_t i = begin; i < end; ++i) update(i, own_scratch);
      },
      slots);
}

template void MuonGroupUpdate<float>(const MuonGroupMatrix<float>*, int64_t, int64_t, int64_t, double, bool, float*,
                                     int);
template void MuonGroupUpdate<double>(const MuonGroupMatrix<double>*, int64_t, int64_t, int64_t, double, bool, double*,
                                      int);

}  // namespace gpt_sft::runtime::kernels
