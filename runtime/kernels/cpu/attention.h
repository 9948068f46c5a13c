// Causal self-attention with optional segment ids (a query attends to keys j <= i of its
// own segment, so a packed row trains as if each conversation were alone) and GQA (kv head
// g serves query heads g*rep .. g*rep+rep-1, rep = H/Hkv). q [B,T,H,D], k/v [B,T,Hkv,D] ->
// out [B,T,H,D]; scale 1/sqrt(D).
//
// Flash-style: queries and keys in blocks of kAttentionBlock, scores of one block pair at a
// time with an online softmax (no [T,T] matrix), blocks above the diagonal or between
// disjoint segment-id ranges skipped. The forward saves the log-sum-exp per (b, h, t), from
// which the backward recomputes the probabilities. Work is spread over the pool
// (parallel.h): the forward over (b, h, query block); results do not depend on the thread
// count. Scratch: a transposed copy of k (and of v in the backward), the size of k; tile
// scratch per pool thread (at D = 64, float: ~50 KB forward, ~0.2 MB backward); in the
// backward, [B,H,T] row dot products. The overloads taking a Workspace use the caller's memory and allocate nothing
// (size it with the *WorkspaceBytes function beside them); the others allocate it per call.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_ATTENTION_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_ATTENTION_H_

#include <cstdint>

#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::kernels {

struct AttentionShape {
  int64_t B, T, H, Hkv, D;
};

inline constexpr int64_t kAttentionBlock = 64;

/// `segment_ids` [B,T] may be null (plain causal). `lse` [B,H,T] receives the log-sum-exp.
template <typename T>
void Attention(const T* q, const T* k, const T* v, const int32_t* segment_ids, AttentionShape s, T* out, T* lse);
/// The same in `workspace`, at least AttentionWorkspaceBytes<T>(s, segment_ids != null) bytes
/// (sized for NumThreads() threads; a smaller thread count at run time uses less of it, a
/// larger one runs on as many threads as it has room for).
template <typename T>
void Attention(const T* q, const T* k, const T* v, const int32_t* segment_ids, AttentionShape s, T* out, T* lse,
               Workspace workspace);
template <typename T>
int64_t AttentionWorkspaceBytes(AttentionShape s, bool segment_ids);

/// How the backward shares work. kFused: one task per (b, kv head) does everything (five
/// tile products per block pair). kTwoPass: tasks per (b, kv head, key block) for dk, dv,
/// then per (b, h, query block) for dq (seven products, more parallelism). Both give
/// bit-identical results; kAuto fuses when there are >= 4 tasks per thread.
enum class AttentionGradSchedule { kAuto, kFused, kTwoPass };

/// dq, dk, dv [shapes of q, k, v] are overwritten. Needs the forward's `out` and `lse`.
template <typename T>
void AttentionGrad(const T* q, const T* k, const T* v, const int32_t* segment_ids, AttentionShape s, const T* out,
                   const T* lse, const T* dout, T* dq, T* dk, T* dv,
                   AttentionGradSchedule schedule = AttentionGradSchedule::kAuto);
/// The same in `workspace`, at least AttentionGradWorkspaceBytes<T>(s, segment_ids != null).
template <typename T>
void AttentionGrad(const T* q, const T* k, const T* v, const int32_t* segment_ids, AttentionShape s, const T* out,
                   const T* lse, const T* dout, T* dq, T* dk, T* dv, Workspace workspace,
                   AttentionGradSchedule schedule = AttentionGradSchedule::kAuto);
template <typename T>
int64_t AttentionGradWorkspaceBytes(AttentionShape s, bool segment_ids);

/// Attention under bf16 autocast: q, k, v (and, for the grad, dout) are bf16 values held as
/// f32, as PyTorch's CPU flash attention (and GPU flash attention) computes them: tile
/// products on bf16 operands with f32 sums (tile_gemm_bf16.h), softmax in f32, the
/// probabilities rounded to bf16 before P V and P^T dO, the score gradient P (dP - Delta)
/// rounded to bf16 before dS K and dS^T Q (scaled after), Delta from the output rounded to
/// bf16 (what autocast stores). Same schedules, workspaces sized by their own functions (on
/// AMX they also hold K, V, Q and dO packed as bf16 pairs: about their bf16 size each).
void AttentionBf16Inputs(const float* q, const float* k, const float* v, const int32_t* segment_ids,
                         AttentionShape s, float* out, float* lse);
void AttentionBf16Inputs(const float* q, const float* k, const float* v, const int32_t* segment_ids,
                         AttentionShape s, float* out, float* lse, Workspace workspace);
int64_t AttentionBf16InputsWorkspaceBytes(AttentionShape s, bool segment_ids);
void AttentionGradBf16Inputs(const float* q, const float* k, const float* v, const int32_t* segment_ids,
                             AttentionShape s, const float* out, const float* lse, const float* dout, float* dq,
                             float* dk, float* dv, AttentionGradSchedule schedule = AttentionGradSchedule::kAuto);
void AttentionGradBf16Inputs(const float* q, const float* k, const float* v, const int32_t* segment_ids,
                             AttentionShape s, const float* out, const float* lse, const float* dout, float* dq,
                             float* dk, float* dv, Workspace workspace,
                             AttentionGradSchedule schedule = AttentionGradSchedule::kAuto);
int64_t AttentionGradBf16InputsWorkspaceBytes(AttentionShape s, bool segment_ids);
/// AttentionGradBf16Inputs (in `workspace`) with dv written prepared for `gemm` instead of as
/// f32 (matmul_bf16.h: each value rounded to bf16 as that kernel reads it, in the f32 values'
/// order: bf16 bit patterns in the first half of dv's bytes on onednn): for the bf16 GEMMs
/// that alone read dv (the value projection's input and weight gradients). The same bits as
/// preparing AttentionGradBf16Inputs's dv afterwards, without writing it as f32 first.
void AttentionGradBf16InputsPreparedDv(const float* q, const float* k, const float* v, const int32_t* segment_ids,
                                       AttentionShape s, const float* out, const float* lse, const float* dout,
                                       float* dq, float* dk, Bf16Gemm gemm, void* dv_prepared, Workspace workspace,
                                       AttentionGradSchedule schedule = AttentionGradSchedule::kAuto);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ATTENTION_H_
