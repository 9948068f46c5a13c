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
class MatmulReluSquareBf16 : public ::testing::TestWithParam<int64_t> {};

// N (the prepared rows' length) a multiple of 32 lanes and not.
TEST_P(MatmulReluSquareBf16, PreparedOperandsGiveTheUnfusedBits) {
  const int64_t M = 1000, N = GetParam(), K = 64;
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

// The relu² backward as the epilogue of the product that makes its cotangent: the unfused bits
// (the rounded grad-input product, then ReluSquareGrad), g as f32 (apart, or over dh's or u's
// bytes) or prepared.
TEST_P(MatmulReluSquareBf16, GradientEpilogueIsTheUnfusedChain) {
  const int64_t M = 700, N = 96, K = GetParam() + 64;  // dy [M, N], w [N, K]: dh, u, g [M, K]
  const testing::Vec rdy = testing::Random(M * N, 7), rw = testing::Random(N * K, 8), ru = testing::Random(M * K, 9);
  const std::vector<float> dy(rdy.begin(), rdy.end()), w(rw.begin(), rw.end()), u(ru.begin(), ru.end());
  std::vector<float> dh(M * K), g(M * K), g_prepared(M * K, -1.0f);
  MatmulGradInputBf16Inputs(dy.data(), w.data(), dh.data(), M, N, K, /*round_output=*/true);
  ReluSquareGrad(u.data(), dh.data(), g.data(), M * K);
  PrepareBf16Operand(ActiveBf16Gemm(), g.data(), M * K, g_prepared.data());
  int positive = 0;
  for (float v : u) positive += v > 0.f;
  ASSERT_GT(positive, 0);
  ASSERT_LT(positive, M * K);

  std::vector<float> f_dh(M * K), f_g(M * K);
  MatmulGradInputBf16ReluSquareGrad(dy.data(), w.data(), u.data(), f_dh.data(), f_g.data(), false, M, N, K);
  ExpectSameBits(dh, f_dh, "dh");
  ExpectSameBits(g, f_g, "g");
  std::vector<float> over_dh(M * K);
  MatmulGradInputBf16ReluSquareGrad(dy.data(), w.data(), u.data(), over_dh.data(), over_dh.data(), false, M, N, K);
  ExpectSameBits(g, over_dh, "g over dh");
  std::vector<float> over_u = u, dh3(M * K);
  MatmulGradInputBf16ReluSquareGrad(dy.data(), w.data(), over_u.data(), dh3.data(), over_u.data(), false, M, N, K);
  ExpectSameBits(g, over_u, "g over u");
  std::vector<float> dh4(M * K), p_g(M * K, -1.0f);
  MatmulGradInputBf16ReluSquareGrad(dy.data(), w.data(), u.data(), dh4.data(), p_g.data(), true, M, N, K);
  ExpectSameBits(g_prepared, p_g, "g prepared");
  std::vector<float> shared(M * K, -1.0f);  // prepared g over dh's bytes
  MatmulGradInputBf16ReluSquareGrad(dy.data(), w.data(), u.data(), shared.data(), shared.data(), true, M, N, K);
  ExpectSameBits(g_prepared, shared, "g prepared over dh");
  std::vector<float> over_u_prepared = u, dh5(M * K);  // prepared g over u's bytes
  MatmulGradInputBf16ReluSquareGrad(dy.data(), w.data(), over_u_prepared.data(), dh5.data(), over_u_prepared.data(),
                                    true, M, N, K);
  over_u_prepared.resize(M * K * Bf16PreparedElementBytes(ActiveBf16Gemm()) / sizeof(float));
  std::vector<float> want_prefix(g_prepared.begin(), g_prepared.begin() + over_u_prepared.size());
  ExpectSameBits(want_prefix, over_u_prepared, "g prepared over u");
}

INSTANTIATE_TEST_SUITE_P(Widths, MatmulReluSquareBf16, ::testing::Values(96, 101));

}  // namespace
}  // namespace gpt_sft::runtime::kernels
