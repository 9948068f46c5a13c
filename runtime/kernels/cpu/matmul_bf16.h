// The matmul kernels for inputs whose every element is a bfloat16 value stored as f32: what
// gpt.matmul and gpt.matmul_weight_grad read under `--dtype=bfloat16` (nanochat's autocast:
// gpt-autocast-bf16 rounds each matmul's operands, and the round's VJP each cotangent).
// Products of bf16 values are exact in f32, so the two kernels below differ only in the
// order of the f32 sums:
// * onednn: the inputs are narrowed to bf16 (exactly: round to nearest even, as
//   gpt.round_bf16 does) and multiplied by oneDNN on bf16 dot-product instructions (AMX,
//   AVX512_BF16), f32 accumulation; C's rows split over the pool as Gemm does (matmul.h).
// * fp32: the f32 Gemm (OpenBLAS sgemm) on the same values, each input rounded to bf16
//   values first (a no-op on bf16 values): the fallback on CPUs without bf16 dot products.
// Both kernels thus round what they read to bf16 (to nearest even): on f32 inputs they
// compute the product of the rounded inputs, so the compiler may drop a gpt.round_bf16 that
// only they read (gpt-elide-gemm-input-rounding).
// The kernel is chosen once, at first use, from the CPU's flags; GPT_SFT_CPU_BF16_GEMM=
// onednn|fp32 forces one (onednn on a CPU without it falls back, with a message).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_BF16_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_BF16_H_

#include <cstdint>
#include <string>

namespace gpt_sft::runtime::kernels {

enum class Bf16Gemm { kOneDnn, kFp32 };

/// The kernel the bf16-input matmuls run: GPT_SFT_CPU_BF16_GEMM if set (and possible here),
/// else onednn where oneDNN has bf16 dot products, else fp32.
Bf16Gemm ActiveBf16Gemm();

/// What ActiveBf16Gemm() runs, for logs and benchmark reports: "onednn" plus the oneDNN
/// implementations that ran so far (e.g. "onednn[brg:avx512_core_amx_bf16]"), or "fp32
/// (sgemm on bf16 values)" and why.
std::string Bf16GemmDescription();

/// Gemm (matmul.h) with alpha 1 and beta 0 or 1, on the inputs rounded to bf16 values, by `kernel`
/// (kOneDnn only where OneDnnHasBf16DotProduct(), onednn_gemm.h).
void GemmBf16Inputs(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a,
                    int64_t lda, const float* b, int64_t ldb, bool accumulate, float* c, int64_t ldc);

/// GemmBf16Inputs with C rounded to bf16 values, each chunk of rows right after it is written
/// (an epilogue: the same bits as RoundBf16 over C afterwards, without another pass over it).
void GemmBf16InputsRoundedOutput(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                                 const float* a, int64_t lda, const float* b, int64_t ldb, bool accumulate, float* c,
                                 int64_t ldc);

/// Matmul and its VJP's kernels (matmul.h) on bf16-valued inputs, by ActiveBf16Gemm().
void MatmulBf16Inputs(const float* x, const float* w, float* y, int64_t M, int64_t N, int64_t K);
/// MatmulBf16Inputs with y rounded to bf16 values (the compiled step's fusion of a matmul and
/// the autocast rounding of its result, when nothing else reads the unrounded one).
void MatmulBf16InputsRoundedOutput(const float* x, const float* w, float* y, int64_t M, int64_t N, int64_t K);
void MatmulGradWeightBf16Inputs(const float* dy, const float* x, float* dw, int64_t M, int64_t N, int64_t K,
                                bool accumulate);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_BF16_H_
