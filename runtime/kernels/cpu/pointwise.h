// Pointwise kernels of the gpt dialect and their vector-Jacobian products:
// relu_square y = relu(x)^2, softcap y = cap * tanh(x / cap). n elements, any layout.
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_POINTWISE_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_POINTWISE_H_

#include <cstdint>

namespace gpt_sft::runtime::kernels {

template <typename T> void ReluSquare(const T* x, T* y, int64_t n);
/// dx = dy * 2 relu(x)
template <typename T> void ReluSquareGrad(const T* x, const T* dy, T* dx, int64_t n);
template <typename T> void Softcap(const T* x, T* y, int64_t n, T cap);
/// From the output (so x need not stay alive): dx = dy * (1 - (y / cap)^2)
template <typename T> void SoftcapGrad(const T* y, const T* dy, T* dx, int64_t n, T cap);

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_POINTWISE_H_
