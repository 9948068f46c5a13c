// The residual-stream fusions compute the unfused kernels' bits (the interpreter's Add,
// RmsNorm, RmsNormGrad), also when outputs share their inputs' bytes as the compiled step's
// buffer plan may make them.
#include "runtime/kernels/cpu/residual_rms_norm.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/same_bits.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::ExpectSameBits;

template <typename T>
std::vector<T> Of(const testing::Vec& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <typename T>
void ExpectFusedIsUnfused(int64_t rows, int64_t dim) {
  const int64_t n = rows * dim;
  const T eps = T(kRmsNormEps);
  const std::vector<T> a = Of<T>(testing::Random(n, 5, 3.0)), b = Of<T>(testing::Random(n, 6)),
                       dy = Of<T>(testing::Random(n, 7)), r = Of<T>(testing::Random(n, 8));

  std::vector<T> sum(n), y(n);
  Add(a.data(), b.data(), sum.data(), n);
  RmsNorm(sum.data(), y.data(), rows, dim, eps);
  std::vector<T> fused_sum(n), fused_y(n);
  AddRmsNorm(a.data(), b.data(), fused_sum.data(), fused_y.data(), rows, dim, eps);
  ExpectSameBits(sum, fused_sum, "sum");
  ExpectSameBits(y, fused_y, "y");
  std::vector<T> sum_over_b = b, y_over_a = a;  // the plan's in-place placements
  AddRmsNorm(y_over_a.data(), sum_over_b.data(), sum_over_b.data(), y_over_a.data(), rows, dim, eps);
  ExpectSameBits(sum, sum_over_b, "sum written over b");
  ExpectSameBits(y, y_over_a, "y written over a");

  std::vector<T> g(n), out(n);
  RmsNormGrad(sum.data(), dy.data(), g.data(), rows, dim, eps);
  Add(r.data(), g.data(), out.data(), n);
  std::vector<T> fused_out(n);
  RmsNormGradAdd(sum.data(), dy.data(), r.data(), fused_out.data(), rows, dim, eps);
  ExpectSameBits(out, fused_out, "out");
  std::vector<T> out_over_r = r, out_over_dy = dy;
  RmsNormGradAdd(sum.data(), dy.data(), out_over_r.data(), out_over_r.data(), rows, dim, eps);
  ExpectSameBits(out, out_over_r, "out written over r");
  RmsNormGradAdd(sum.data(), out_over_dy.data(), r.data(), out_over_dy.data(), rows, dim, eps);
  ExpectSameBits(out, out_over_dy, "out written over dy");
}

TEST(ResidualRmsNorm, FloatIsBitIdenticalToTheUnfusedKernels) {
  ExpectFusedIsUnfused<float>(150, 64);
  ExpectFusedIsUnfused<float>(3, 37);
}
// Under bf16 autocast: the norm's gradient, then the fusion add -> round_bf16 with the residual
// gradient, as the interpreter runs them; also over r's and dy's bytes.
TEST(ResidualRmsNorm, Bf16GradIsTheUnfusedGradAddAndRounding) {
  for (auto [rows, dim] : {std::pair<int64_t, int64_t>{150, 64}, {3, 37}, {40, 256}}) {
    const int64_t n = rows * dim;
    const float eps = float(kRmsNormEps);
    const std::vector<float> x = Of<float>(testing::Random(n, 15, 3.0)), dy = Of<float>(testing::Random(n, 16)),
                             r = Of<float>(testing::Random(n, 17));
    std::vector<float> g(n), sum(n), want(n);
    RmsNormGrad(x.data(), dy.data(), g.data(), rows, dim, eps);
    Add(r.data(), g.data(), sum.data(), n);
    RoundBf16(sum.data(), want.data(), n);
    std::vector<float> got(n), over_r = r, over_dy = dy;
    RmsNormGradAddRoundBf16(x.data(), dy.data(), r.data(), got.data(), rows, dim, eps);
    ExpectSameBits(want, got, "out");
    RmsNormGradAddRoundBf16(x.data(), dy.data(), over_r.data(), over_r.data(), rows, dim, eps);
    ExpectSameBits(want, over_r, "out written over r");
    RmsNormGradAddRoundBf16(x.data(), over_dy.data(), r.data(), over_dy.data(), rows, dim, eps);
    ExpectSameBits(want, over_dy, "out written over dy");
    EXPECT_NE(sum, want);  // the rounding is there to see
  }
}

TEST(ResidualRmsNorm, DoubleIsBitIdenticalToTheUnfusedKernels) {
  ExpectFusedIsUnfused<double>(150, 64);
  ExpectFusedIsUnfused<double>(3, 37);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
