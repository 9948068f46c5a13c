// nanochat's SFT optimizer updates, in place on the parameter and its state (the buffers
// the compiled step will donate): AdamW for wte and lm_head, Muon for block matrices.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_OPTIMIZERS_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_OPTIMIZERS_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

struct AdamWHyper {
  double lr, beta1 = 0.8, beta2 = 0.95, eps = 1e-10, weight_decay = 0.0;
  int64_t step;  // 1-based, after this update
};

/// p *= 1 - lr wd; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
/// p -= (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)
template <typename T> void AdamWUpdate(T* p, T* m, T* v, const T* g, int64_t n, const AdamWHyper& h);

struct MuonHyper {
  double lr, momentum = 0.95;
  /// NS5 in bf16 as nanochat runs it (newton_schulz_bf16.h; float only): Muon under
  /// `--dtype=bfloat16`. Else NS5 in T.
  bool newton_schulz_bf16 = false;
};

/// For a [rows, cols] matrix: buf = mu buf + (1-mu) g; g' = (1-mu) g + mu buf (Nesterov);
/// p -= lr sqrt(max(1, rows/cols)) NS5(g'). `scratch` holds MuonScratchSize(rows, cols).
/// newton_schulz_bf16 with T = double is a programming error (aborts).
template <typename T>
void MuonUpdate(T* p, T* buf, const T* g, int64_t rows, int64_t cols, const MuonHyper& h, T* scratch);

/// Newton-Schulz, 5 steps with (3.4445, -4.7750, 2.0315), of g [rows, cols] into out:
/// transpose a tall matrix to wide, X = G / (|G|_F + 1e-7), then X = aX + (bA + cA^2) X
/// with A = X X^T; transpose back. `scratch` holds NewtonSchulz5ScratchSize(rows, cols).
template <typename T> void NewtonSchulz5(const T* g, T* out, int64_t rows, int64_t cols, T* scratch);

/// X and X' ([rows*cols] each), A and B ([s, s] each, s = min(rows, cols)).
inline int64_t NewtonSchulz5ScratchSize(int64_t rows, int64_t cols) {
  const int64_t s = rows < cols ? rows : cols;
  return 2 * rows * cols + 2 * s * s;
}
/// g' and NS5(g') ([rows*cols] each), then NewtonSchulz5's own.
inline int64_t MuonScratchSize(int64_t rows, int64_t cols) {
  return 2 * rows * cols + NewtonSchulz5ScratchSize(rows, cols);
}

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_OPTIMIZERS_H_
