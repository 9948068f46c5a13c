// The bias-free Linear of the gpt dialect through BLAS: y[M,N] = x[M,K] @ w[N,K]^T, and
// its VJP: dx[M,K] = dy[M,N] @ w[N,K];  dw[N,K] (+)= dy[M,N]^T @ x[M,K].
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

template <typename T> void Matmul(const T* x, const T* w, T* y, int64_t M, int64_t N, int64_t K);
template <typename T> void MatmulGradInput(const T* dy, const T* w, T* dx, int64_t M, int64_t N, int64_t K);
/// `accumulate`: add into dw (gradient accumulation over micro-steps) instead of overwriting.
template <typename T>
void MatmulGradWeight(const T* dy, const T* x, T* dw, int64_t M, int64_t N, int64_t K, bool accumulate);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_H_
