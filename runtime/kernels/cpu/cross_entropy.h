// Cross entropy with ignore index -1, mean over the counted targets (torch's 'mean'):
// logits [N, V], targets [N]. The VJP scales softmax - onehot by dloss / count.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_CROSS_ENTROPY_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_CROSS_ENTROPY_H_

#include <cstdint>

#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::kernels {

struct CrossEntropyResult {
  double loss;    // mean over counted targets; 0 when none counts
  int64_t count;  // targets != -1
};

template <typename T>
CrossEntropyResult CrossEntropy(const T* logits, const int32_t* targets, int64_t N, int64_t V);
/// The same with its per-chunk partial sums in `workspace` (CrossEntropyWorkspaceBytes(N)):
/// no allocation. The gradients below need no scratch.
template <typename T>
CrossEntropyResult CrossEntropy(const T* logits, const int32_t* targets, int64_t N, int64_t V, Workspace workspace);
int64_t CrossEntropyWorkspaceBytes(int64_t N);

/// The loss of softcapped logits y = cap tanh(x / cap), computed in the same pass over each
/// row: y is written (every row: the backward reads it) and the loss is CrossEntropy(y), bit
/// for bit, without rereading the [N, V] y (the compiled step's fusion of gpt.softcap into
/// its cross_entropy). y may be x's bytes. Workspace as CrossEntropy's.
template <typename T>
CrossEntropyResult SoftcapCrossEntropy(const T* x, T cap, T* y, const int32_t* targets, int64_t N, int64_t V,
                                       Workspace workspace);
/// The same for nanochat's bf16 softcap (softcap_bf16.h: y = bf16(cap bf16(tanh(bf16(x' /
/// cap))))), x' = bf16(x) when `round_input` (the autocast rounding of the logits before it):
/// y written for every row, the loss CrossEntropy(y) bit for bit.
CrossEntropyResult SoftcapBf16CrossEntropy(const float* x, float cap, bool round_input, float* y,
                                           const int32_t* targets, int64_t N, int64_t V, Workspace workspace);
/// dlogits for an upstream gradient `dloss` of the mean loss; rows with target -1 get 0.
template <typename T>
void CrossEntropyGrad(const T* logits, const int32_t* targets, int64_t N, int64_t V, double dloss, T* dlogits);

/// The cross-entropy gradient of softcapped logits y = cap tanh(x / cap), carried through the
/// softcap in the same pass over each row: dx = CrossEntropyGrad(y) * (1 - (y / cap)^2), the
/// value SoftcapGrad(y, CrossEntropyGrad(y)) gives, bit for bit, without writing and rereading
/// the [N, V] intermediate (an epilogue fusion the compiled step uses).
template <typename T>
void CrossEntropySoftcapGrad(const T* y, const int32_t* targets, int64_t N, int64_t V, double dloss, T cap, T* dx);

/// The same with the autocast rounding between the two (the gradient of the bf16 softcap
/// reads a bf16 cotangent): dx = SoftcapGrad(y, RoundBf16(CrossEntropyGrad(y))), bit for bit.
void CrossEntropyBf16SoftcapGrad(const float* y, const int32_t* targets, int64_t N, int64_t V, double dloss,
                                 float cap, float* dx);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_CROSS_ENTROPY_H_
