// The fused matmul + relu² computes the unfused kernels' bits (Matmul or the bf16 rounded
// matmul, then ReluSquare), also with r written over y, and on a shape Gemm splits over the
// pool.
#include "runtime/kernels/cpu/matmul_relu_square.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/same_bits.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::ExpectSameBits;

template <typename T>
void ExpectFusedIsUnfused(bool bf16) {
  const int64_t M = 1000, N = 96, K = 64;
  const testing::Vec rx = testing::Random(M * K, 1), rw = testing::Random(N * K, 2);
  const std::vector<T> x(rx.begin(), rx.end()), w(rw.begin(), rw.end());
  std::vector<T> y(M * N), r(M * N), fused_y(M * N), fused_r(M * N);
  if constexpr (std::is_same_v<T, float>) {
    if (bf16) {
      MatmulBf16InputsRoundedOutput(x.data(), w.data(), y.data(), M, N, K);
    } else {
      Matmul(x.data(), w.data(), y.data(), M, N, K);
    }
  } else {
    Matmul(x.data(), w.data(), y.data(), M, N, K);
  }
  ReluSquare(y.data(), r.data(), M * N);
  if constexpr (std::is_same_v<T, float>) {
    if (bf16) {
      MatmulBf16RoundReluSquare(x.data(), w.data(), fused_y.data(), fused_r.data(), M, N, K);
    } else {
      MatmulReluSquare(x.data(), w.data(), fused_y.data(), fused_r.data(), M, N, K);
    }
  } else {
    MatmulReluSquare(x.data(), w.data(), fused_y.data(), fused_r.data(), M, N, K);
  }
  ExpectSameBits(y, fused_y, "y");
  ExpectSameBits(r, fused_r, "r");
  int positive = 0;
  for (T v : r) positive += v > T(0);
  EXPECT_GT(positive, 0);
  EXPECT_LT(positive, M * N);
  // r over y's bytes.
  std::vector<T> shared(M * N);
  if (bf16) {
    if constexpr (std::is_same_v<T, float>) {
      MatmulBf16RoundReluSquare(x.data(), w.data(), shared.data(), shared.data(), M, N, K);
    }
  } else {
    MatmulReluSquare(x.data(), w.data(), shared.data(), shared.data(), M, N, K);
  }
  ExpectSameBits(r, shared, "r over y");
}

TEST(MatmulReluSquare, FloatIsMatmulThenReluSquare) { ExpectFusedIsUnfused<float>(false); }
TEST(MatmulReluSquare, DoubleIsMatmulThenReluSquare) { ExpectFusedIsUnfused<double>(false); }
TEST(MatmulReluSquare, Bf16IsRoundedMatmulThenReluSquare) { ExpectFusedIsUnfused<float>(true); }

// Under bf16 autocast the compiled step may read x and write r prepared for the bf16 GEMMs:
// each combination gives the unfused bits (r prepared: the prepared bits of the unfused r).
TEST(MatmulReluSquare, Bf16PreparedOperandsGiveTheUnfusedBits) {
  const int64_t M = 1000, N = 96, K = 64;
  const testing::Vec rx = testing::Random(M * K, 1), rw = testing::Random(N * K, 2);
  const std::vector<float> x(rx.begin(), rx.end()), w(rw.begin(), rw.end());
  std::vector<float> y(M * N), r(M * N), want_r(M * N, -1.0f), x_prepared(M * K);
  MatmulBf16RoundReluSquare(x.data(), w.data(), y.data(), r.data(), M, N, K);
  PrepareBf16Operand(ActiveBf16Gemm(), r.data(), M * N, want_r.data());
  PrepareBf16Operand(ActiveBf16Gemm(), x.data(), M * K, x_prepared.data());
  for (bool x_is_prepared : {false, true}) {
    for (bool r_is_prepared : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "x prepared " << x_is_prepared << ", r prepared " << r_is_prepared);
      std::vector<float> fused_y(M * N), fused_r(M * N, -1.0f);
      MatmulBf16RoundReluSquarePrepared(x_is_prepared ? x_prepared.data() : x.data(), x_is_prepared, w.data(),
                                        fused_y.data(), fused_r.data(), r_is_prepared, M, N, K);
      ExpectSameBits(y, fused_y, "y");
      ExpectSameBits(r_is_prepared ? want_r : r, fused_r, "r");  // past the prepared bytes untouched too
    }
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
