// The MLP's first matmul with relu² as its epilogue, the compiled cpu step's fusion of
// gpt.matmul and the gpt.relu_square right after it: y = x w^T (kept: relu²'s gradient reads
// it) and r = relu(y)², each block of rows squared while Gemm's block is still in cache,
// instead of a second pass reading all of y back. The same bits as Matmul (or, under bf16
// autocast, MatmulBf16InputsRoundedOutput: the rounding of y fused too) then ReluSquare.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_RELU_SQUARE_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_RELU_SQUARE_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

/// y [M, N] = x [M, K] w [N, K]^T, r = relu(y)²; r may be y's bytes (then y is not kept), never
/// x's or w's.
template <typename T>
void MatmulReluSquare(const T* x, const T* w, T* y, T* r, int64_t M, int64_t N, int64_t K);

/// Under bf16 autocast: y = RoundBf16(x w^T) on bf16 products (matmul_bf16.h), r = relu(y)².
void MatmulBf16RoundReluSquare(const float* x, const float* w, float* y, float* r, int64_t M, int64_t N, int64_t K);
/// MatmulBf16RoundReluSquare with x as its producer wrote it (x_prepared: prepared for the bf16
/// GEMM, matmul_bf16.h) and r written prepared for the bf16 GEMMs that alone read it
/// (r_prepared: PrepareBf16Operand of relu(y)², [M, N] compact): the compiler's choices when
/// only bf16 GEMMs read the MLP's input norm or its hidden activation, sparing each of them a
/// pass that prepares it. The same bits. A prepared r shares no byte with x, w or y.
void MatmulBf16RoundReluSquarePrepared(const void* x, bool x_prepared, const float* w, float* y, void* r,
                                       bool r_prepared, int64_t M, int64_t N, int64_t K);

/// The MLP's relu² backward under bf16 autocast as the epilogue of the product that makes its
/// cotangent: dh = RoundBf16(dy w) (dy [M, N], w [N, K]: matmul_grad_input's product on bf16
/// values), then g = relu_square_grad(u, dh) = dh * 2 relu(u) (pointwise.h), each block of rows
/// while in cache, written as f32 or prepared for the bf16 GEMMs that alone read it
/// (g_prepared). The same bits as MatmulGradInputBf16Inputs (rounded) then ReluSquareGrad.
/// g may be dh's or u's bytes (dh is not written when g is prepared); it shares none with dy or
/// w, nor dh with dy, w or u.
void MatmulGradInputBf16ReluSquareGrad(const float* dy, const float* w, const float* u, float* dh, void* g,
                                       bool g_prepared, int64_t M, int64_t N, int64_t K);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_RELU_SQUARE_H_
