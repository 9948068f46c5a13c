// The instruction-set seam of vec_math.h's float exp rows, for tests: the AVX-512 loop
// (16 lanes) and the AVX2 one (8 lanes) give the same bits and the same double sums, and
// a test compares them byte for byte. Production code calls vec_math.h, which takes the
// widest one the CPU has.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_VEC_MATH_ISA_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_VEC_MATH_ISA_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

enum class ExpKernel { kAvx2, kAvx512 };

/// True when this CPU can run `kernel`.
bool ExpKernelSupported(ExpKernel kernel);

/// e = exp(mult * x[j] - shift), out[j] = scale * e when out is not null; returns sum_j e,
/// by `kernel` (which must be supported).
double ExpWithKernel(ExpKernel kernel, const float* x, int64_t n, float mult, float shift, float scale, float* out);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_VEC_MATH_ISA_H_
