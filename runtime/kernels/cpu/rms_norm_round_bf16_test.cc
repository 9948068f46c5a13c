// The rounded norms give the bits of the norm followed by RoundBf16.
#include "runtime/kernels/cpu/rms_norm_round_bf16.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/same_bits.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::ExpectSameBits;

std::vector<float> Random(int64_t n, int seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(gen);
  return v;
}

TEST(RmsNormRoundBf16, IsRmsNormThenRound) {
  const int64_t rows = 301, dim = 128;  // several chunks, a ragged last one
  const std::vector<float> x = Random(rows * dim, 1);
  std::vector<float> want(rows * dim), got(rows * dim);
  RmsNorm(x.data(), want.data(), rows, dim, 1e-6f);
  RoundBf16(want.data(), want.data(), rows * dim);
  RmsNormRoundBf16(x.data(), got.data(), rows, dim, 1e-6f);
  ExpectSameBits(want, got, "y");
  std::vector<float> unrounded(rows * dim);
  RmsNorm(x.data(), unrounded.data(), rows, dim, 1e-6f);
  EXPECT_NE(unrounded, got) << "the rounding is applied";
}

TEST(RmsNormRoundBf16, GradIsRmsNormGradThenRound) {
  const int64_t rows = 301, dim = 256;
  const std::vector<float> x = Random(rows * dim, 2), dy = Random(rows * dim, 3);
  std::vector<float> want(rows * dim), got(rows * dim);
  RmsNormGrad(x.data(), dy.data(), want.data(), rows, dim, 1e-6f);
  RoundBf16(want.data(), want.data(), rows * dim);
  RmsNormGradRoundBf16(x.data(), dy.data(), got.data(), rows, dim, 1e-6f);
  ExpectSameBits(want, got, "dx");
}

TEST(RmsNormRoundBf16, GradOfRoundedDyIsRoundThenRmsNormGradThenMaybeRound) {
  const int64_t rows = 301, dim = 128;
  const std::vector<float> x = Random(rows * dim, 4), dy = Random(rows * dim, 5);
  std::vector<float> rounded_dy = dy;
  RoundBf16(rounded_dy.data(), rounded_dy.data(), rows * dim);
  for (bool round_dx : {false, true}) {
    std::vector<float> want(rows * dim), got(rows * dim);
    RmsNormGrad(x.data(), rounded_dy.data(), want.data(), rows, dim, 1e-6f);
    if (round_dx) RoundBf16(want.data(), want.data(), rows * dim);
    RmsNormGradOfRoundedDy(x.data(), dy.data(), got.data(), rows, dim, 1e-6f, round_dx);
    ExpectSameBits(want, got, round_dx ? "dx rounded" : "dx");
    // In place over dy's bytes too.
    std::vector<float> in_place = dy;
    RmsNormGradOfRoundedDy(x.data(), in_place.data(), in_place.data(), rows, dim, 1e-6f, round_dx);
    ExpectSameBits(want, in_place, "dx in place");
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
