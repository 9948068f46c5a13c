// A small dense GEMM for the tiles of the tiled kernels (attention's 64x64 query-by-key
// blocks): C[m,n] (+)= A[m,k] @ B[k,n], row-major with explicit leading dimensions, so a
// tile can be read in place from a strided tensor ([B,T,H,D] rows) without packing.
//
// Why not BLAS: the attention kernel calls this from many pool threads at once on tiles of
// ~1 MFLOP, where OpenBLAS's per-call set-up and its own threading get in the way. This is
// a register-blocked kernel chosen at run time: AVX-512 (blocks of 14 rows x 32 floats /
// 16 doubles), else AVX2+FMA (6 x 16 / 6 x 8), else a portable loop; the two vector kernels
// give identical bits (tile_gemm_isa.h). B's rows and C's rows must each be contiguous.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_TILE_GEMM_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_TILE_GEMM_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

/// C = A B when `accumulate` is false, C += A B when true. A [m, k] (row stride lda),
/// B [k, n] (ldb), C [m, n] (ldc). No allocation; C must not alias A or B.
template <typename T>
void TileGemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc,
              bool accumulate);

/// The same with A given transposed: C (+)= A^T B for A stored [k, m] (row stride lda), so
/// a tile's transpose (P^T, dS^T in attention's backward) is read in place.
template <typename T>
void TileGemmTransposedA(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                         int64_t ldc, bool accumulate);

/// out[j, i] = in[i, j] for in [rows, cols] (row stride ld_in) into out [cols, rows] (ld_out).
template <typename T>
void TransposeTile(int64_t rows, int64_t cols, const T* in, int64_t ld_in, T* out, int64_t ld_out);

/// The kernel TileGemm runs on this CPU: "AVX-512", "AVX2+FMA" or "portable".
const char* TileGemmKernelName();

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_TILE_GEMM_H_
