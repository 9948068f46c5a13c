// The instruction sets the CPU kernels choose among at run time, asked once in one place. Safe
// to call from static initializers (they initialise the compiler's CPU model first).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_CPU_FEATURES_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_CPU_FEATURES_H_

namespace gpt_sft::runtime::kernels {

/// AVX2 with FMA.
bool CpuHasAvx2Fma();
/// AVX512F.
bool CpuHasAvx512F();
/// AVX512F, AVX512BW and AVX512_BF16 (the bf16 conversions and dot products).
bool CpuHasAvx512Bf16();

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_CPU_FEATURES_H_
