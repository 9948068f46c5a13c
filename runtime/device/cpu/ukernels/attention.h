// The cpu driver's attention family (ukernel/attention.h: its parameters and argument order).
#ifndef GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_ATTENTION_H_
#define GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_ATTENTION_H_

#include <string_view>

#include "runtime/device/cpu/host_builtins.h"

namespace gpt_sft::runtime::device::cpu {

/// The table entry of `cpu.attention.f32` (f64 false) or `cpu.attention.f64`.
HostBuiltin AttentionBuiltin(std::string_view name, bool f64);

}  // namespace gpt_sft::runtime::device::cpu

#endif  // GPT_SFT_RUNTIME_DEVICE_CPU_UKERNELS_ATTENTION_H_
