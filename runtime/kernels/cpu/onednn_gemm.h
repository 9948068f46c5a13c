// A GEMM on bfloat16 inputs with f32 accumulation and output, through oneDNN's matmul
// primitive: oneDNN picks its kernel at run time from the CPU's flags (AMX-BF16 tiles,
// AVX512_BF16's vdpbf16ps). The one place the kernels call oneDNN.
//
// Threads: each call runs on the calling thread alone (oneDNN's OpenMP team is set to one
// thread for it), so the kernels' pool (parallel.h) splits a GEMM into row blocks and calls
// this once per block, as it does with OpenBLAS; no OpenMP workers spin beside the pool.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_ONEDNN_GEMM_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_ONEDNN_GEMM_H_

#include <cstdint>
#include <string>
#include <vector>

namespace gpt_sft::runtime::kernels {

/// True when oneDNN runs bf16 matmuls on dot-product instructions on this CPU (its effective
/// ISA has AVX512_BF16, or AMX-BF16 on top). ONEDNN_MAX_CPU_ISA lowers what it sees.
bool OneDnnHasBf16DotProduct();

/// Row-major C[M,N] = op(A) op(B) (+ C when `accumulate`), A and B bfloat16 bit patterns
/// (A [M,K] or, transposed, stored [K,M]; B [K,N] or stored [N,K]), C f32. Only when
/// OneDnnHasBf16DotProduct(). Primitives are made once per shape and cached.
void OneDnnGemmBf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const uint16_t* a, int64_t lda,
                    const uint16_t* b, int64_t ldb, bool accumulate, float* c, int64_t ldc);

/// The oneDNN implementations the calls so far ran (e.g. "brg:avx512_core_amx_bf16"),
/// sorted, each once: what a benchmark reports as the kernels that ran.
std::vector<std::string> OneDnnKernelsUsed();

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_ONEDNN_GEMM_H_
