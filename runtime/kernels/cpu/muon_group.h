// Muon over a group of same-shape matrices in one call: the compiled step's optimizer runs an
// entry point's muon_updates of one shape as one launch (compiler/lowering/cpu/
// muon_group_fusion.h), as nanochat's Muon steps a group of same-shape parameters together.
//
// Why: one matrix's Newton-Schulz is a chain of small GEMMs (256 x 256 at depth 4) whose
// split over the pool buys little against its per-call overheads, and whose copies,
// normalisation and epilogues run on one thread anyway. With at least as many matrices as
// threads each pool task takes whole matrices instead, so every part of Muon runs in parallel.
//
// Bits: a task runs MuonUpdate (optimizers.h) itself. Inside a task every ParallelFor of it
// (its elementwise passes, the row blocks of Gemm and of the bf16 GEMMs) runs its chunks on
// the task's thread, one after another (parallel.h): the same chunks, of the same sizes (they
// depend on NumThreads() and the shape only), through the same BLAS or oneDNN calls the pool
// runs when MuonUpdate is called on its own. So each matrix gets exactly the bits that calling
// MuonUpdate on it gives, which is what the interpreter does (muon_group_test proves it).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_MUON_GROUP_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_MUON_GROUP_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

/// One matrix of a group: its parameter and momentum buffer (updated in place), its gradient
/// and its learning rate.
template <typename T>
struct MuonGroupMatrix {
  T* param;
  T* momentum_buffer;
  const T* grad;
  double lr;
};

/// The matrices of a `count` group that run at once on `threads` threads: one per thread when
/// there are at least as many matrices as threads; else 1 (one after another, each splitting
/// its products over the pool: fewer matrices than threads would leave threads idle).
int MuonGroupSlots(int64_t count, int threads);

/// Elements of T between two slots' scratch (MuonScratchSize, rounded up to 64 bytes so two
/// tasks never write one cache line).
int64_t MuonGroupSlotStride(int64_t rows, int64_t cols, int64_t element_bytes);

/// MuonUpdate (optimizers.h) of each of the `count` [rows, cols] matrices with the group's
/// momentum and Newton-Schulz mode (newton_schulz_bf16: as MuonHyper's), bit for bit what
/// calling it on each in turn gives. The matrices must share no byte with one another.
/// `scratch` holds `slots` x MuonGroupSlotStride elements; `slots` >= 1 caps how many
/// matrices run at once (MuonGroupSlots of the thread count is the most that helps).
template <typename T>
void MuonGroupUpdate(const MuonGroupMatrix<T>* matrices, int64_t count, int64_t rows, int64_t cols, double momentum,
                     bool newton_schulz_bf16, T* scratch, int slots);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_MUON_GROUP_H_
