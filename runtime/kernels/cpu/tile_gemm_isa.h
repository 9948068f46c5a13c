// The instruction-set seam of TileGemm (tile_gemm.h), for tests: which kernels this CPU
// can run, and a call that forces one. Production code calls TileGemm, which takes the
// widest kernel the CPU has (the order of TileGemmIsa).
//
// The vector kernels agree bit for bit: every C element is one sequential fused
// multiply-add chain over p (from 0, or from C when accumulating) in both, and the columns
// past the last whole AVX2 vector (n % 8 floats, n % 4 doubles) take the portable loop in
// both. The portable kernel (multiply then add) differs from them in the last bits.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_TILE_GEMM_ISA_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_TILE_GEMM_ISA_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

enum class TileGemmIsa { kPortable, kAvx2, kAvx512 };

/// True when this CPU can run `isa`'s kernel (kPortable always).
bool TileGemmIsaSupported(TileGemmIsa isa);

/// The kernel TileGemm uses on this CPU.
TileGemmIsa TileGemmDefaultIsa();

/// TileGemm (transposed_a false) or TileGemmTransposedA (true) on `isa`'s kernel, which
/// must be supported.
template <typename T>
void TileGemmWithIsa(TileGemmIsa isa, bool transposed_a, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                     const T* b, int64_t ldb, T* c, int64_t ldc, bool accumulate);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_TILE_GEMM_ISA_H_
