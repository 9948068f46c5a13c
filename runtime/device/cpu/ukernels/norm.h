// The cpu driver's row-norm family (ukernel/norm.h: its parameters and argument order).
#ifndef GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_NORM_H_
#define GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_NORM_H_

#include <string_view>

#include "runtime/device/cpu/host_builtins.h"

namespace gpt_sft::runtime::device::cpu {

/// The table entry of `cpu.norm.f32` (f64 false) or `cpu.norm.f64`.
HostBuiltin NormBuiltin(std::string_view name, bool f64);

}  // namespace gpt_sft::runtime::device::cpu

#endif  // GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_NORM_H_
