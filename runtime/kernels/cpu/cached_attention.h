// Attention over a KV cache (NANOCHAT.md 1.7): the Tq queries are the LAST Tq of the Tk
// positions, so query i (absolute position Tk - Tq + i) sees keys 0 .. Tk - Tq + i: the
// causal mask aligned bottom-right. Tq == Tk is plain causal attention (prefill), Tq == 1
// sees every key (one decoding step), anything between is a chunked prefill.
// q [B,Tq,H,D], k/v [B,Tk,Hkv,D] -> out [B,Tq,H,D]; GQA as in attention.h (kv head g serves
// query heads g*rep .. g*rep+rep-1); scores q.k * scale.
//
// Direct: one task per (b, h, query) computes its visible scores, their softmax and the
// weighted sum of values, accumulating in double. Decoding has Tq = 1, where tiling buys
// nothing; long prefills should use attention.h (the interpreter does when Tq == Tk).
// Results do not depend on the thread count. Allocates one score row per task.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_CACHED_ATTENTION_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_CACHED_ATTENTION_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

struct CachedAttentionShape {
  int64_t B, Tq, Tk, H, Hkv, D;  // Tq <= Tk, H % Hkv == 0
};

template <typename T>
void CachedAttention(const T* q, const T* k, const T* v, CachedAttentionShape s, double scale, T* out);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_CACHED_ATTENTION_H_
