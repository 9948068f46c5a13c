#include "trainer/bench/cpu_kernels_report.h"

#include "runtime/kernels/cpu/matmul_bf16.h"

namespace gpt_sft::bench {

std::string CpuMatmulKernels(bool bf16) {
  return bf16 ? "bf16 inputs: " + runtime::kernels::Bf16GemmDescription() : "openblas sgemm";
}

}  // namespace gpt_sft::bench
