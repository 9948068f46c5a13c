// Implements the matmul + relu² fusion on the GEMMs' own row blocks (MatmulThen,
// MatmulBf16InputsRoundedOutputThen) with ReluSquareRange as their epilogue.
#include "runtime/kernels/cpu/matmul_relu_square.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/pointwise.h"

namespace gpt_sft::runtime::kernels {

template <typename T>
void MatmulReluSquare(const T* x, const T* w, T* y, T* r, int64_t M, int64_t N, int64_t K) {
  MatmulThen<T>(x, w, y, M, N, K,
                [&](int64_t m0, int64_t m1) { ReluSquareRange(y + m0 * N, r + m0 * N, (m1 - m0) * N); });
}

void MatmulBf16RoundReluSquare(const float* x, const float* w, float* y, float* r, int64_t M, int64_t N, int64_t K) {
  MatmulBf16RoundReluSquarePrepared(x, /*x_prepared=*/false, w, y, r, /*r_prepared=*/false, M, N, K);
}

void MatmulBf16RoundReluSquarePrepared(const void* x, bool x_prepared, const float* w, float* y, void* r,
                                       bool r_prepared, int64_t M, int64_t N, int64_t K) {
  const Bf16Gemm kernel = ActiveBf16Gemm();
  char* const r_bytes = static_cast<char*>(r);
  const int64_t element = Bf16PreparedElementBytes(kernel);
  auto epilogue = [&](int64_t m0, int64_t m1) {
    if (!r_prepared) return ReluSquareRange(y + m0 * N, static_cast<float*>(r) + m0 * N, (m1 - m0) * N);
    thread_local std::vector<float> squared;  // a row, squared, then prepared while in cache
    squared.resize(N);
    for (int64_t m = m0; m < m1; ++m) {
      ReluSquareRange(y + m * N, squared.data(), N);
      PrepareBf16Operand(kernel, squared.data(), N, r_bytes + m * N * element);
    }
  };
  if (x_prepared) return MatmulBf16PreparedXRoundedOutputThen(x, w, y, M, N, K, epilogue);
  MatmulBf16InputsRoundedOutputThen(static_cast<const float*>(x), w, y, M, N, K, epilogue);
}

namespace {

/// Whether [a, a + bytes) and [b, b + bytes) share a byte.
bool Overlap(const void* a, const void* b, int64_t bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bytes && y < x + bytes;
}

/// g prepared: each block's dh rows go to the running thread's scratch (Gemm's blocks and its
/// calls, matmul_bf16.h: the same bits as into dh), so g's prepared rows, at half width, may
/// take dh's bytes without overlapping rows another block has yet to read. Where g takes u's
/// bytes instead, its rows are gathered in dh's (unused then) and copied once every block has
/// read its rows of u.
void GradInputReluSquareGradPrepared(const float* dy, const float* w, const float* u, float* dh, void* g, int64_t M,
                                     int64_t N, int64_t K) {
  if (M <= 0 || K <= 0) return;  // no rows of g to write
  const Bf16Gemm kernel = ActiveBf16Gemm();
  const int64_t element = Bf16PreparedElementBytes(kernel);
  const bool over_u = Overlap(g, u, M * K * static_cast<int64_t>(sizeof(float)));
  char* const rows_out = static_cast<char*>(over_u ? static_cast<void*>(dh) : g);
  thread_local std::vector<uint8_t> storage;
  storage.resize(Bf16GemmB::StorageBytes(kernel, K, N));
  const Bf16GemmB b(kernel, /*trans_b=*/false, /*N=*/K, /*K=*/N, w, K, storage.data());
  auto rows = [&](int64_t m0, int64_t m1) {
    const int64_t n = (m1 - m0) * K;
    thread_local std::vector<float> dh_rows, g_rows;
    dh_rows.resize(n);
    g_rows.resize(n);
    if (N > 0) {
      b.MultiplyRows(/*trans_a=*/false, m0, m1, dy, N, /*accumulate=*/false, dh_rows.data(), K, /*round_output=*/true);
    } else {
      std::fill(dh_rows.begin(), dh_rows.end(), 0.0f);  // no products (what BLAS gives with K = 0)
    }
    ReluSquareGradRange(u + m0 * K, dh_rows.data(), g_rows.data(), n);
    PrepareBf16Operand(kernel, g_rows.data(), n, rows_out + m0 * K * element);
  };
  ForEachGemmBlock(M, K, N, rows);
  if (!over_u) return;
  auto copy = [&](int64_t m0, int64_t m1) {
    std::memcpy(static_cast<char*>(g) + m0 * K * element, rows_out + m0 * K * element, (m1 - m0) * K * element);
  };
  ForEachGemmBlock(M, K, N, copy);
}

}  // namespace

void MatmulGradInputBf16ReluSquareGrad(const float* dy, const float* w, const float* u, float* dh, void* g,
                                       bool g_prepared, int64_t M, int64_t N, int64_t K) {
  if (g_prepared) return GradInputReluSquareGradPrepared(dy, w, u, dh, g, M, N, K);
  auto gradient_rows = [&](int64_t m0, int64_t m1) {
    ReluSquareGradRange(u + m0 * K, dh + m0 * K, static_cast<float*>(g) + m0 * K, (m1 - m0) * K);
  };
  const ChunkBody epilogue(gradient_rows);  // refers to gradient_rows, which outlives it
  MatmulGradInputBf16(dy, /*dy_prepared=*/false, w, dh, M, N, K, /*round_output=*/true, &epilogue);
}

template void MatmulReluSquare<float>(const float*, const float*, float*, float*, int64_t, int64_t, int64_t);
template void MatmulReluSquare<double>(const double*, const double*, double*, double*, int64_t, int64_t, int64_t);

}  // namespace gpt_sft::runtime::kernels
