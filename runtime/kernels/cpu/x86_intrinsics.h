// The x86 intrinsics, as every CPU kernel includes them (never <immintrin.h> directly:
// isa_dispatch_lint_test checks).
//
// GCC 12's AVX-512 headers build many intrinsics (_mm512_cvtps_pd, _mm512_extractf64x4_pd,
// _mm512_sqrt_pd, ...) on `_mm512_undefined_*()`, whose body reads a deliberately
// uninitialised vector (`__m512 __Y = __Y;`). Inlined into a kernel, each use warned
// -W(maybe-)uninitialized at the header's line: 122 warnings in a clean build that buried any
// real one. Those warnings are located in the header, so silencing them around this one
// #include silences exactly them and leaves the same warnings on for the kernels' own code.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_X86_INTRINSICS_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_X86_INTRINSICS_H_

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>  // IWYU pragma: export
#pragma GCC diagnostic pop

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_X86_INTRINSICS_H_
