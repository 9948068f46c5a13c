// The cpu driver's rotary family (ukernel/rotary.h: its parameters and argument order).
#ifndef GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_ROTARY_H_
#define GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_ROTARY_H_

#include <string_view>

#include "runtime/device/cpu/host_builtins.h"

namespace gpt_sft::runtime::device::cpu {

/// The table entry of `cpu.rotary.f32` (f64 false) or `cpu.rotary.f64`.
HostBuiltin RotaryBuiltin(std::string_view name, bool f64);

}  // namespace gpt_sft::runtime::device::cpu

#endif  // GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_ROTARY_H_
