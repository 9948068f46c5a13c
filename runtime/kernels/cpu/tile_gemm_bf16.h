// TileGemm (tile_gemm.h) for operands whose every element is a bfloat16 value held as f32:
// attention's tile products under bf16 autocast (q, k, v, the output's cotangent, and the
// probabilities and score gradients it rounds). Products of bf16 values are exact in f32,
// so the kernels differ only in the order of the f32 sums:
// * amx: the operands packed as bf16 pairs (the narrowing keeps the top 16 bits, exact on
//   bf16 values) and multiplied by AMX's TDPBF16PS, 16x16x32 per instruction, f32 sums;
// * dpbf16: the same packing on AVX512_BF16's vdpbf16ps (32 products per instruction);
// * fp32: TileGemm itself on the same values (f32 fused multiply-adds).
// Chosen once, at first use: amx where the CPU has AMX-BF16 and Linux grants the tile state,
// else fp32. dpbf16 runs only when asked for (GPT_SFT_CPU_BF16_TILE=amx|dpbf16|fp32 forces
// one): on the Sapphire Rapids machine it was written on it ran at half the speed of the f32
// FMA kernel (vdpbf16ps issues at a quarter of the FMA rate), AMX at 1.65 times it
// (kernels_benchmark's BM_TileGemmBf16).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_TILE_GEMM_BF16_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_TILE_GEMM_BF16_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

enum class Bf16TileKernel { kAmx, kDpBf16, kFp32 };

/// The kernel TileGemmBf16 runs on this CPU, and its name ("AMX", "AVX512_BF16" or "fp32 FMA").
Bf16TileKernel ActiveBf16TileKernel();
const char* Bf16TileKernelName();
/// True when this CPU can run `kernel` (kFp32 always).
bool Bf16TileKernelSupported(Bf16TileKernel kernel);

/// Caller-provided room for the packed operands of one call, in uint16_t elements.
int64_t TileGemmBf16ScratchElements(int64_t m, int64_t n, int64_t k);

/// C (+)= op(A) B as TileGemm (transposed_a false: A [m, k], row stride lda) or
/// TileGemmTransposedA (true: A stored [k, m]) do, on bf16-valued A and B. `scratch` holds
/// TileGemmBf16ScratchElements(m, n, k) elements (unused by kFp32).
void TileGemmBf16(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, bool transposed_a, const float* b,
                  int64_t ldb, float* c, int64_t ldc, bool accumulate, uint16_t* scratch,
                  Bf16TileKernel kernel = ActiveBf16TileKernel());

/// Operands packed once for several products (attention's K, V tiles, read by every query
/// block). Only the AMX kernel reads packed operands (Bf16TileKernelReadsPacked()); the others
/// pack their own. Sizes in uint32_t elements; A plain [m, k] (row stride lda), B [k, n].
/// The packers are AVX-512 code: call them only where CpuIsaAtLeast(CpuIsa::kAvx512)
/// (always so where Bf16TileKernelReadsPacked()); below it they abort.
bool Bf16TileKernelReadsPacked();
int64_t PackedBf16AElements(int64_t m, int64_t k);
int64_t PackedBf16BElements(int64_t k, int64_t n);
void PackBf16A(int64_t m, int64_t k, const float* a, int64_t lda, uint32_t* out);
void PackBf16B(int64_t k, int64_t n, const float* b, int64_t ldb, uint32_t* out);
/// PackBf16B of B = bt^T, bt [n, k] (row stride ldbt): the same bits, without a transposed
/// copy (attention's K^T and V^T tiles from K and V).
void PackBf16BTransposed(int64_t k, int64_t n, const float* bt, int64_t ldbt, uint32_t* out);

/// TileGemmBf16 on the active kernel, with A (plain only, not transposed_a) and/or B also
/// given packed (null: not packed). The f32 operands are always given: the kernels that read
/// no packed operand use them. Packed or not, the bits are the same.
void TileGemmBf16Packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, bool transposed_a,
                        const uint32_t* packed_a, const float* b, int64_t ldb, const uint32_t* packed_b, float* c,
                        int64_t ldc, bool accumulate, uint16_t* scratch);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_TILE_GEMM_BF16_H_
