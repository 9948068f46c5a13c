// Test seam of vec_math.cc: its float kernels per instruction set, so a test can check on an
// AVX-512 CPU that the AVX-512 and AVX2 kernels give the same bits. Not for other callers:
// vec_math.h chooses by the CPU's flags. The AVX2 ones need AVX2+FMA, the AVX-512 ones AVX512F.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_VEC_MATH_ISA_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_VEC_MATH_ISA_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels::vec_math_isa {

/// The levels of the kernels below (base/cpu_isa.h); called below its level, a kernel aborts.
bool HasAvx2();
bool HasAvx512();
double ExpAffineAvx2(const float* x, int64_t n, float mult, float shift, float* out);
double ExpAffineAvx512(const float* x, int64_t n, float mult, float shift, float* out);
void ScaledTanhAvx2(const float* x, int64_t n, float in_scale, float out_scale, float* out);
void ScaledTanhAvx512(const float* x, int64_t n, float in_scale, float out_scale, float* out);
void ScaleSoftcapGradScalar(const float* y, int64_t n, float factor, float cap, float* out);
void ScaleSoftcapGradAvx2(const float* y, int64_t n, float factor, float cap, float* out);
void ScaleSoftcapGradAvx512(const float* y, int64_t n, float factor, float cap, float* out);

}  // namespace gpt_sft::runtime::kernels::vec_math_isa

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_VEC_MATH_ISA_H_
