// Two element-wise kernels the cuda driver carries as PTX text: f32 -> bf16 (round to nearest
// even) and bf16 -> f32 (exact). The sdpa builtins need them around cuDNN, which reads and
// writes bf16, where the step's buffers are f32 holding bf16 values (SDPA_BUILTIN.md); the
// driver has no compiler, so it carries them written by hand and JIT-loads them once.
//
// Each kernel: (const src*, dst*, u64 n), one element per thread, guarded by n; launch
// ceil(n / kBf16ConvertBlock) blocks of kBf16ConvertBlock threads.
#ifndef GPT_SFT_RUNTIME_DEVICE_CUDA_BF16_CONVERT_PTX_H_
#define GPT_SFT_RUNTIME_DEVICE_CUDA_BF16_CONVERT_PTX_H_

namespace gpt_sft::runtime::device::cuda {

/// PTX 7.8 for sm_80 and later (cvt.rn.bf16.f32 needs sm_80): both kernels, NUL-terminated.
extern const char kBf16ConvertPtx[];
inline constexpr char kF32ToBf16Kernel[] = "gpt_f32_to_bf16";
inline constexpr char kBf16ToF32Kernel[] = "gpt_bf16_to_f32";
inline constexpr unsigned int kBf16ConvertBlock = 256;

}  // namespace gpt_sft::runtime::device::cuda

#endif  // GPT_SFT_RUNTIME_DEVICE_CUDA_BF16_CONVERT_PTX_H_
