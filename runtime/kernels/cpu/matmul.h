// The bias-free Linear of the gpt dialect through BLAS: y[M,N] = x[M,K] @ w[N,K]^T, and
// its VJP: dx[M,K] = dy[M,N] @ w[N,K];  dw[N,K] (+)= dy[M,N]^T @ x[M,K].
//
// Threads: OpenBLAS is kept single-threaded (parallel.h sets it) and Gemm splits C's rows
// over the kernels' pool instead, so BLAS's own spinning workers never compete with the
// pool for cores between a matmul and the next kernel.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_H_

#include <cstdint>

#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {

/// The kernels OpenBLAS chose for this CPU (its own CPUID dispatch, e.g. "SkylakeX" or "Haswell";
/// OPENBLAS_CORETYPE overrides it), for logs and benchmark reports. OpenBLAS decides this when it
/// loads, before GPT_SFT_CPU_ISA is read, so a cap does not lower it.
const char* OpenBlasCoreName();
template <typename T> void Matmul(const T* x, const T* w, T* y, int64_t M, int64_t N, int64_t K);
/// Matmul with `epilogue(m0, m1)` run on each of Gemm's row blocks right after BLAS wrote it
/// (in cache, on the same thread): the same bits for y as Matmul. A ChunkBody refers to the
/// caller's lambda: nothing allocates.
template <typename T>
void MatmulThen(const T* x, const T* w, T* y, int64_t M, int64_t N, int64_t K,
                ChunkBody epilogue);
template <typename T> void MatmulGradInput(const T* dy, const T* w, T* dx, int64_t M, int64_t N, int64_t K);
/// `accumulate`: add into dw (gradient accumulation over micro-steps) instead of overwriting.
template <typename T>
void MatmulGradWeight(const T* dy, const T* x, T* dw, int64_t M, int64_t N, int64_t K, bool accumulate);

/// Row-major C[M,N] = alpha op(A) op(B) + beta C, op = transpose when asked (A is [M,K] or,
/// transposed, stored [K,M]; B is [K,N] or stored [N,K]), C's rows split over the pool.
template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc);

/// The rows of C that Gemm gives each BLAS call for these sizes (M itself when it makes one
/// call): a fused kernel that calls GemmBlock on the same row blocks computes Gemm's very bits.
int64_t GemmBlockRows(int64_t M, int64_t N, int64_t K);
/// block(m0, m1) on each of GemmBlockRows(M, N, K)'s blocks of [0, M): on the calling thread
/// when one block covers them all, else over the pool. Gemm's own split of C's rows.
void ForEachGemmBlock(int64_t M, int64_t N, int64_t K, ChunkBody block);

/// One BLAS call on the calling thread, whatever the size: what Gemm runs per block.
template <typename T>
void GemmBlock(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* a, int64_t lda,
               const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_H_
