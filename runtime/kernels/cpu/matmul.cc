// Implements the matmul kernels with OpenBLAS (row-major cblas calls, one per pool chunk of
// C's rows; products under ~4 MFLOP stay one call).
#include "runtime/kernels/cpu/matmul.h"

#include <cblas.h>

#include <algorithm>

#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {

const char* OpenBlasCoreName() { return openblas_get_corename(); }
namespace {

CBLAS_TRANSPOSE Op(bool t) { return t ? CblasTrans : CblasNoTrans; }

void Blas(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, Op(ta), Op(tb), M, N, K, alpha, a, lda, b, ldb, beta, c, ldc);
}
void Blas(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, Op(ta), Op(tb), M, N, K, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

int64_t GemmBlockRows(int64_t M, int64_t N, int64_t K) {
  const int threads = NumThreads();
  if (threads == 1 || double(M) * N * K < 2e6 || M < 32) return std::max<int64_t>(M, 1);
  // Four chunks per thread, handed out dynamically so a thread the OS delays does not hold
  // up the rest; rows a multiple of 16 (BLAS's register blocks), at least 128: each call packs
  // all of B again, and a weight gradient's B is [tokens, n] (64-row chunks of a 256-row
  // gradient spent 13% more than 128-row ones, on one core of this CPU).
  return std::max<int64_t>(128, ((M + 4 * threads - 1) / (4 * threads) + 15) / 16 * 16);
}

void ForEachGemmBlock(int64_t M, int64_t N, int64_t K, ChunkBody block) {
  const int64_t rows = GemmBlockRows(M, N, K);
  if (rows >= M) return block(0, M);
  ParallelFor(M, rows, block);
}

template <typename T>
void GemmBlock(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* a, int64_t lda,
               const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (M > 0 && N > 0) Blas(trans_a, trans_b, M, N, K, alpha, a, lda, b, ldb, beta, c, ldc);
}

namespace {

/// Gemm's row split, with `epilogue` (if any) run on each block of C's rows right after BLAS
/// wrote it, on the same thread.
template <typename T>
void GemmRows(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* a, int64_t lda,
              const T* b, int64_t ldb, T beta, T* c, int64_t ldc, const ChunkBody* epilogue) {
  if (M <= 0 || N <= 0) return;
  auto block = [&](int64_t m0, int64_t m1) {
    const T* a0 = trans_a ? a + m0 : a + m0 * lda;
    Blas(trans_a, trans_b, m1 - m0, N, K, alpha, a0, lda, b, ldb, beta, c + m0 * ldc, ldc);
    if (epilogue != nullptr) (*epilogue)(m0, m1);
  };
  ForEachGemmBlock(M, N, K, block);
}

}  // namespace

template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  GemmRows(trans_a, trans_b, M, N, K, alpha, a, lda, b, ldb, beta, c, ldc, nullptr);
}

template <typename T>
void Matmul(const T* x, const T* w, T* y, int64_t M, int64_t N, int64_t K) {
  Gemm<T>(false, true, M, N, K, T(1), x, K, w, K, T(0), y, N);
}

template <typename T>
void MatmulThen(const T* x, const T* w, T* y, int64_t M, int64_t N, int64_t K, ChunkBody epilogue) {
  GemmRows<T>(false, true, M, N, K, T(1), x, K, w, K, T(0), y, N, &epilogue);
}

template <typename T>
void MatmulGradInput(const T* dy, const T* w, T* dx, int64_t M, int64_t N, int64_t K) {
  Gemm<T>(false, false, M, K, N, T(1), dy, N, w, K, T(0), dx, K);
}

template <typename T>
void MatmulGradWeight(const T* dy, const T* x, T* dw, int64_t M, int64_t N, int64_t K, bool accumulate) {
  Gemm<T>(true, false, N, K, M, T(1), dy, N, x, K, accumulate ? T(1) : T(0), dw, K);
}

#define INSTANTIATE(T)                                                                                      \
  template void Matmul<T>(const T*, const T*, T*, int64_t, int64_t, int64_t);                               \
  template void MatmulThen<T>(const T*, const T*, T*, int64_t, int64_t, int64_t,                            \
                              ChunkBody);                                \
  template void MatmulGradInput<T>(const T*, const T*, T*, int64_t, int64_t, int64_t);                      \
  template void MatmulGradWeight<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, bool);               \
  template void Gemm<T>(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, T*, \
                        int64_t);                                                                           \
  template void GemmBlock<T>(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, \
                             T*, int64_t);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

}  // namespace gpt_sft::runtime::kernels
