// Implements the matmul kernels with OpenBLAS (row-major cblas calls).
#include "runtime/kernels/cpu/matmul.h"

#include <cblas.h>

namespace gpt_sft::runtime::kernels {
namespace {

void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.f, a, lda, b, ldb, beta, c, ldc);
}
void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

template <typename T>
void Matmul(const T* x, const T* w, T* y, int64_t M, int64_t N, int64_t K) {
  Gemm(CblasNoTrans, CblasTrans, M, N, K, x, K, w, K, T(0), y, N);
}

template <typename T>
void MatmulGradInput(const T* dy, const T* w, T* dx, int64_t M, int64_t N, int64_t K) {
  Gemm(CblasNoTrans, CblasNoTrans, M, K, N, dy, N, w, K, T(0), dx, K);
}

template <typename T>
void MatmulGradWeight(const T* dy, const T* x, T* dw, int64_t M, int64_t N, int64_t K, bool accumulate) {
  Gemm(CblasTrans, CblasNoTrans, N, K, M, dy, N, x, K, accumulate ? T(1) : T(0), dw, K);
}

#define INSTANTIATE(T)                                                                 \
  template void Matmul<T>(const T*, const T*, T*, int64_t, int64_t, int64_t);          \
  template void MatmulGradInput<T>(const T*, const T*, T*, int64_t, int64_t, int64_t); \
  template void MatmulGradWeight<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, bool);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

}  // namespace gpt_sft::runtime::kernels
