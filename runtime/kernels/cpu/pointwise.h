// Pointwise kernels of the gpt dialect and their vector-Jacobian products, n elements of
// any layout (same shape, no broadcasting), parallel over chunks:
//   relu_square y = relu(x)^2,  softcap y = cap * tanh(x / cap),  add y = a + b,  mul y = a b.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_POINTWISE_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_POINTWISE_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

template <typename T> void ReluSquare(const T* x, T* y, int64_t n);
/// ReluSquare over one range on the calling thread (a fused kernel's epilogue: the same bits).
template <typename T> void ReluSquareRange(const T* x, T* y, int64_t n);
/// dx = dy * 2 relu(x)
template <typename T> void ReluSquareGrad(const T* x, const T* dy, T* dx, int64_t n);
/// ReluSquareGrad over one range on the calling thread (a fused kernel's epilogue: the same bits).
template <typename T> void ReluSquareGradRange(const T* x, const T* dy, T* dx, int64_t n);
/// float: tanh to ~4e-7 relative (vec_math.h), times cap; double: std::tanh.
template <typename T> void Softcap(const T* x, T* y, int64_t n, T cap);
/// nanochat's softcap under bf16 autocast, three bf16 ops (round_bf16.h):
/// y = bf16(cap * bf16(tanh(bf16(x / cap)))), tanh in float as std::tanh (by the table of
/// softcap_bf16.h: the same bits). y may alias x.
void SoftcapBf16(const float* x, float* y, int64_t n, float cap);
/// From the output (so x need not stay alive): dx = dy * (1 - (y / cap)^2)
template <typename T> void SoftcapGrad(const T* y, const T* dy, T* dx, int64_t n, T cap);
/// y may alias a or b (an in-place residual add).
template <typename T> void Add(const T* a, const T* b, T* y, int64_t n);
/// da = dy, db = dy; either output may be null (not wanted).
template <typename T> void AddGrad(const T* dy, T* da, T* db, int64_t n);
template <typename T> void Mul(const T* a, const T* b, T* y, int64_t n);
/// da = dy b, db = dy a; either output may be null; outputs may alias dy, not a or b.
template <typename T> void MulGrad(const T* a, const T* b, const T* dy, T* da, T* db, int64_t n);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_POINTWISE_H_
