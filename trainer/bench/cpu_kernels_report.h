// What the bench says about which CPU matmul kernels ran: the step's matmuls run OpenBLAS's
// sgemm in f32, and under bf16 autocast runtime/kernels/cpu/matmul_bf16.h's kernel (oneDNN's
// implementations by name, or the fp32 fallback and why).
#ifndef GPT_SFT_TRAINER_BENCH_CPU_KERNELS_REPORT_H_
#define GPT_SFT_TRAINER_BENCH_CPU_KERNELS_REPORT_H_

#include <string>

namespace gpt_sft::bench {

/// The matmul kernels this process ran, for a step of bf16 (`bf16`) or f32/f64 numerics. Call
/// after the step ran: oneDNN names the implementations it picked as it makes them.
std::string CpuMatmulKernels(bool bf16);

}  // namespace gpt_sft::bench

#endif  // GPT_SFT_TRAINER_BENCH_CPU_KERNELS_REPORT_H_
