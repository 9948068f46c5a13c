// Causal self-attention with optional segment ids (a query attends to keys j <= i of its
// own segment, so a packed row trains as if each conversation were alone) and GQA (kv head
// g serves query heads g*rep .. g*rep+rep-1). q [B,T,H,D], k/v [B,T,Hkv,D] -> out [B,T,H,D];
// scale 1/sqrt(D).
//
// This is the interpreter's reference kernel: it streams over keys with an online softmax
// (no [T,T] matrix), saving the log-sum-exp per (b, h, t) for the backward, which
// recomputes probabilities from it (as flash attention does).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_ATTENTION_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_ATTENTION_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

struct AttentionShape {
  int64_t B, T, H, Hkv, D;
};

/// `segment_ids` may be null (plain causal). `lse` [B,H,T] receives the log-sum-exp.
template <typename T>
void Attention(const T* q, const T* k, const T* v, const int32_t* segment_ids, AttentionShape s, T* out, T* lse);

/// dq, dk, dv are overwritten. Needs the forward's `out` and `lse`.
template <typename T>
void AttentionGrad(const T* q, const T* k, const T* v, const int32_t* segment_ids, AttentionShape s, const T* out,
                   const T* lse, const T* dout, T* dq, T* dk, T* dv);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ATTENTION_H_
