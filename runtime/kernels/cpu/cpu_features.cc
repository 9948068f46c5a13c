// Implements the CPU feature queries with GCC's CPU model.
#include "runtime/kernels/cpu/cpu_features.h"

namespace gpt_sft::runtime::kernels {

bool CpuHasAvx2Fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

bool CpuHasAvx512F() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

bool CpuHasAvx512Bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512bf16");
}

}  // namespace gpt_sft::runtime::kernels
