// nanochat's Newton-Schulz orthogonalisation in bfloat16 (NANOCHAT.md 4.3: zeropower_via_
// newtonschulz5 casts G to bf16 and iterates in bf16), what Muon runs under
// `--dtype=bfloat16`. The f32 mode keeps NewtonSchulz5 (optimizers.h) in the parameters'
// dtype, our documented choice there.
//
// Rounding points (each "bf16(.)" rounds to nearest even; values stay f32 in memory):
//   X = bf16(G), transposed when tall;  X = bf16(X / (||X||_F + 1e-7))  (norm and quotient in f64)
//   5 times:  A = bf16(X X^T);  B = bf16(c (A A) + b A);  X = bf16(B X + a X)
// with (a, b, c) = (3.4445, -4.7750, 2.0315). The products multiply bf16 values with f32
// accumulation (GemmBf16Inputs: AMX / AVX512_BF16 through oneDNN where the CPU has them,
// else sgemm on the same values, exact products either way); each epilogue is computed in f32
// and rounded once, the way a compiled (fused) nanochat rounds a fused elementwise kernel's
// output. The GPU targets' Muon under bf16 rounds at the same points.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_NEWTON_SCHULZ_BF16_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_NEWTON_SCHULZ_BF16_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

/// NS5 in bf16 of g [rows, cols] into out [rows, cols] (bf16 values as f32). `scratch` holds
/// NewtonSchulz5ScratchSize(rows, cols) floats (optimizers.h).
void NewtonSchulz5Bf16(const float* g, float* out, int64_t rows, int64_t cols, float* scratch);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_NEWTON_SCHULZ_BF16_H_
