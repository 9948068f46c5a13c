// The cpu driver's GEMM family (ukernel/gemm.h: its parameters and argument order): one
// builtin per element type that reads GemmParams and runs the kernel they name.
#ifndef GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_GEMM_H_
#define GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_GEMM_H_

#include <string_view>

#include "runtime/device/cpu/host_builtins.h"

namespace gpt_sft::runtime::device::cpu {

/// The table entry of `cpu.gemm.f32` (f64 false) or `cpu.gemm.f64`.
HostBuiltin GemmBuiltin(std::string_view name, bool f64);

}  // namespace gpt_sft::runtime::device::cpu

#endif  // GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_GEMM_H_
