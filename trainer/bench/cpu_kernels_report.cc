#include "trainer/bench/cpu_kernels_report.h"

#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"

namespace gpt_sft::bench {

std::string CpuMatmulKernels(bool bf16) {
  const std::string sgemm = std::string("openblas sgemm (") + runtime::kernels::OpenBlasCoreName() + " kernels)";
  return bf16 ? "bf16 inputs: " + runtime::kernels::Bf16GemmDescription() + "; " + sgemm : sgemm;
}

}  // namespace gpt_sft::bench
