// Dense attention: the plain definition of gpt.attention (scores for every query-key pair
// of a (batch, head), masked, softmax, weighted sum) with the causal mask optional. The
// interpreter runs it for causal = false, which the flash kernel of
// runtime/kernels/cpu/attention.h does not do; with causal = true it must agree with that
// kernel (dense_attention_test.cc), which makes it a check of the kernel too.
//
// q [B,T,H,D], k/v [B,T,Hkv,D], segment_ids [B,T] or null, GQA (query head h reads kv head
// h / (H/Hkv)); S = scale q.k, masked to keys j with (!causal or j <= i) and seg[j] ==
// seg[i]; lse [B,H,T] = logsumexp of a row; out = softmax(S) v. Every row sees at least
// its own key (j = i). Double accumulators; parallel over (b, kv head).
#ifndef GPT_SFT_RUNTIME_INTERPRETER_OPS_DENSE_ATTENTION_H_
#define GPT_SFT_RUNTIME_INTERPRETER_OPS_DENSE_ATTENTION_H_

#include <cstdint>

#include "runtime/kernels/cpu/attention.h"

namespace gpt_sft::runtime::interp {

template <typename T>
void DenseAttention(const T* q, const T* k, const T* v, const int32_t* segment_ids, kernels::AttentionShape s,
                    bool causal, double scale, T* out, T* lse);

/// dq, dk, dv overwritten; reads the forward's out and lse.
template <typename T>
void DenseAttentionGrad(const T* q, const T* k, const T* v, const int32_t* segment_ids, kernels::AttentionShape s,
                        bool causal, double scale, const T* out, const T* lse, const T* dout, T* dq, T* dk, T* dv);

}  // namespace gpt_sft::runtime::interp

#endif  // GPT_SFT_RUNTIME_INTERPRETER_OPS_DENSE_ATTENTION_H_
