// nanochat's logit softcap under bf16 autocast, three bf16 ops: y = bf16(cap * bf16(tanh(
// bf16(x / cap)))) (gpt.softcap's round_bf16), tanh in float as std::tanh. tanh's argument
// is a bf16 value, one of 65536, so the whole right-hand side after the first rounding is a
// table of 65536 floats per cap, computed once with the same float arithmetic: a lookup per
// element then gives the formula's bits exactly (NaN included: the table entry is the
// formula evaluated on that very bit pattern), at the cost of a division, a rounding and a
// load instead of a libm tanh.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_SOFTCAP_BF16_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_SOFTCAP_BF16_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

/// Entries in each half of SoftcapBf16Table's table.
inline constexpr int64_t kSoftcapBf16TableHalf = 1 << 16;

/// The table for `cap`, 2 x 65536 entries: entry i is the formula's result after its first
/// rounding, for bf16(x / cap) the bf16 value whose bits are i (as the f32 with bits i << 16);
/// entry 65536 + i the whole formula for x the bf16 value with bits i (what a rounded input
/// looks up). Computed at the first call for each cap and kept (thread-safe); the pointer
/// stays valid for the process.
const float* SoftcapBf16Table(float cap);

/// One range, on the calling thread: y[i] = the formula on x'[i], where x' = bf16(x) when
/// `round_input` (a gpt.round_bf16 right before the softcap, absorbed) and x otherwise. y may
/// be x's bytes.
void SoftcapBf16Range(const float* table, const float* x, int64_t n, float cap, bool round_input, float* y);

/// SoftcapBf16Range over n elements, chunked over the pool.
void SoftcapBf16(const float* x, float* y, int64_t n, float cap, bool round_input);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_SOFTCAP_BF16_H_
