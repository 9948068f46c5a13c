// The table-driven bf16 softcap and the loss kernels built on it give the bits of the ops
// they stand for, as the interpreter runs them one after another.
#include "runtime/kernels/cpu/softcap_bf16.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/same_bits.h"
#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::ExpectSameBits;

constexpr float kCap = 15.0f;

/// The definition, one element at a time: bf16(cap * bf16(tanh(bf16(x / cap)))).
float Formula(float x, float cap) { return RoundToBf16(cap * RoundToBf16(std::tanh(RoundToBf16(x / cap)))); }

/// Logits as a matmul leaves them (not bf16 values), spread past the cap, plus the edge cases.
std::vector<float> Logits(int64_t n, int seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 12.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(gen);
  const float specials[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e30f, -1e30f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                            15.0f * (1.0f + std::ldexp(1.0f, -8)), 7.5f, 3.0e38f, std::numeric_limits<float>::denorm_min()};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0] && i < v.size(); ++i) v[i] = specials[i];
  return v;
}

TEST(SoftcapBf16, TheTableGivesTheFormulasBitsOnEveryBf16Argument) {
  // Every bf16 value x / cap can take, through x = value * cap rounded back: check each entry
  // directly against the formula on its own argument.
  const float* table = SoftcapBf16Table(kCap);
  int bad = 0;
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    float scaled;
    const uint32_t bits = i << 16;
    std::memcpy(&scaled, &bits, sizeof scaled);
    const float want = RoundToBf16(kCap * RoundToBf16(std::tanh(scaled)));
    if (std::memcmp(&want, &table[i], sizeof want) != 0 && ++bad <= 5) ADD_FAILURE() << "entry " << i;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(SoftcapBf16Table(kCap), table) << "one table per cap, kept";
  EXPECT_NE(SoftcapBf16Table(30.0f), table);
}

TEST(SoftcapBf16, TheInputKeyedHalfGivesTheWholeFormulaOnEveryBf16Input) {
  // Every bf16 input (NaNs, infinities, denormals included), through the kernel's rounded
  // path: the formula on that very value.
  std::vector<float> x(1 << 16), want(1 << 16), got(1 << 16);
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    const uint32_t bits = i << 16;
    std::memcpy(&x[i], &bits, sizeof(float));
    want[i] = Formula(x[i], kCap);
  }
  SoftcapBf16(x.data(), got.data(), static_cast<int64_t>(x.size()), kCap, /*round_input=*/true);
  ExpectSameBits(want, got, "softcap_bf16 on every bf16 input");
  // The scalar tail (fewer than 16 elements) too.
  SoftcapBf16Range(SoftcapBf16Table(kCap), x.data() + 1000, 7, kCap, /*round_input=*/true, got.data());
  for (int i = 0; i < 7; ++i) EXPECT_EQ(std::memcmp(&got[i], &want[1000 + i], sizeof(float)), 0) << i;
}

TEST(SoftcapBf16, MatchesTheFormulaElementwiseWithAndWithoutRoundingTheInputFirst) {
  const int64_t n = 100003;  // several chunks, a ragged last one
  const std::vector<float> x = Logits(n, 1);
  std::vector<float> want(n), want_rounded(n), got(n), got_rounded(n);
  for (int64_t i = 0; i < n; ++i) {
    want[i] = Formula(x[i], kCap);
    want_rounded[i] = Formula(RoundToBf16(x[i]), kCap);
  }
  SoftcapBf16(x.data(), got.data(), n, kCap, /*round_input=*/false);
  SoftcapBf16(x.data(), got_rounded.data(), n, kCap, /*round_input=*/true);
  ExpectSameBits(want, got, "softcap_bf16");
  ExpectSameBits(want_rounded, got_rounded, "softcap_bf16 of rounded input");
  // The interpreter's entry point (pointwise.h) is the same kernel, in place too.
  std::vector<float> in_place = x;
  SoftcapBf16(in_place.data(), in_place.data(), n, kCap);
  ExpectSameBits(want, in_place, "pointwise SoftcapBf16 in place");
}

std::vector<int32_t> Targets(int64_t N, int64_t V) {
  std::vector<int32_t> t(N);
  for (int64_t n = 0; n < N; ++n) t[n] = n % 5 == 3 ? -1 : static_cast<int32_t>((n * 7919) % V);
  return t;
}

TEST(SoftcapBf16, TheFusedLossIsRoundSoftcapThenCrossEntropy) {
  const int64_t N = 37, V = 301;
  std::vector<float> x = Logits(N * V, 2);
  for (float& v : x) v = std::isfinite(v) && std::abs(v) < 1e6f ? v : 1.0f;  // a finite loss
  const std::vector<int32_t> targets = Targets(N, V);
  for (bool round_input : {false, true}) {
    std::vector<float> rounded(N * V), y_want(N * V), y(N * V);
    for (int64_t i = 0; i < N * V; ++i) rounded[i] = round_input ? RoundToBf16(x[i]) : x[i];
    SoftcapBf16(rounded.data(), y_want.data(), N * V, kCap);
    const CrossEntropyResult want = CrossEntropy(y_want.data(), targets.data(), N, V);
    const ScratchBuffer workspace(CrossEntropyWorkspaceBytes(N));
    const CrossEntropyResult got =
        SoftcapBf16CrossEntropy(x.data(), kCap, round_input, y.data(), targets.data(), N, V, workspace.get());
    ExpectSameBits(y_want, y, "y");
    EXPECT_EQ(std::memcmp(&want.loss, &got.loss, sizeof want.loss), 0) << want.loss << " vs " << got.loss;
    EXPECT_EQ(want.count, got.count);
  }
}

TEST(SoftcapBf16, TheFusedGradientIsCrossEntropyGradRoundThenSoftcapGrad) {
  const int64_t N = 41, V = 257;
  std::vector<float> x = Logits(N * V, 3);
  for (float& v : x) v = std::isfinite(v) && std::abs(v) < 1e6f ? v : 1.0f;
  std::vector<float> y(N * V);
  SoftcapBf16(x.data(), y.data(), N * V, kCap, /*round_input=*/true);
  const std::vector<int32_t> targets = Targets(N, V);
  const double dloss = 0.75;
  std::vector<float> g(N * V), want(N * V), got(N * V);
  CrossEntropyGrad(y.data(), targets.data(), N, V, dloss, g.data());
  RoundBf16(g.data(), g.data(), N * V);
  SoftcapGrad(y.data(), g.data(), want.data(), N * V, kCap);
  CrossEntropyBf16SoftcapGrad(y.data(), targets.data(), N, V, dloss, kCap, got.data());
  ExpectSameBits(want, got, "dx");
  // The rounding matters: without it the unrounded chain differs somewhere.
  std::vector<float> unrounded(N * V);
  CrossEntropySoftcapGrad(y.data(), targets.data(), N, V, dloss, kCap, unrounded.data());
  EXPECT_NE(unrounded, got);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
