// Our own GEMM on AMX tiles for bf16 bit patterns with f32 sums: what the bf16 matmuls
// (matmul_bf16.h, kernel "amx") run where the CPU has AMX-BF16, in place of oneDNN's matmul
// primitive. Why our own: oneDNN 2.6's primitive copies both operands into its own layouts on
// every call (B once per row block, about a sixth of the bf16 step's CPU time) and allocates
// its bookkeeping on every call (so a compiled bf16 step was not allocation-free). Here B is
// packed once per GEMM by the caller (AmxPackB) and shared by every row block, A is read in
// place (tile loads take its row stride) unless it is stored transposed, and nothing
// allocates after a thread's first call.
//
// The sums: each C element is the f32 sum, in k order 32 at a time, of TDPBF16PS's products;
// the order depends on K only, never on M, N, the row block or the strides, so any split of
// C's rows over the pool gives the same bits as one call.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_AMX_GEMM_BF16_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_AMX_GEMM_BF16_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

/// True when this CPU has AMX-BF16 and Linux grants this process the tile state.
bool AmxGemmBf16Supported();

/// op(B) packed for AmxGemmBf16: per block of 32 columns, its K rows as bf16 pairs
/// [pairs rounded up to 16][32 columns] (32-bit units), zero padded. Size in bytes.
int64_t AmxPackedBBytes(int64_t N, int64_t K);
/// The number of 32-column blocks AmxPackB packs (its unit of work for a split over threads).
int64_t AmxPackedBBlocks(int64_t N);
/// Packs the column blocks [block0, block1) of op(B), bf16 bits: B [K, N] (row stride ldb), or
/// when trans_b stored [N, K] (row stride ldb), into `packed` (AmxPackedBBytes(N, K) bytes).
/// `packed` should start on a cache line: each 64-byte row of a B tile then lies in one line
/// (elsewhere every row straddles two; the same bits, up to 1.5x slower).
void AmxPackB(bool trans_b, int64_t N, int64_t K, const uint16_t* b, int64_t ldb, int64_t block0, int64_t block1,
              uint32_t* packed);
/// AmxPackB of f32 values, each rounded to bf16 as it is packed (to nearest even, as
/// RoundToBf16): the same bits as narrowing B first, in one pass. Needs AVX512_BF16.
void AmxPackB(bool trans_b, int64_t N, int64_t K, const float* b, int64_t ldb, int64_t block0, int64_t block1,
              uint32_t* packed);

/// C[M, N] (+ C when `accumulate`) = op(A) B on the calling thread: A bf16 bits [M, K] (row
/// stride lda) or, trans_a, stored [K, M] (row stride lda); B packed by AmxPackB; C row-major
/// (row stride ldc). Only where AmxGemmBf16Supported().
void AmxGemmBf16(bool trans_a, int64_t M, int64_t N, int64_t K, const uint16_t* a, int64_t lda,
                 const uint32_t* packed_b, bool accumulate, float* c, int64_t ldc);
/// AmxGemmBf16 on an f32 A, each value rounded to bf16 as A is gathered into tiles (to
/// nearest even): the same bits as on A narrowed first, in one pass. Needs AVX512_BF16.
void AmxGemmBf16(bool trans_a, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                 const uint32_t* packed_b, bool accumulate, float* c, int64_t ldc);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_AMX_GEMM_BF16_H_
