// The fused QK-norm kernels compute the unfused kernels' bits (the interpreter's Rotary,
// RmsNorm, RmsNormGrad, RotaryGrad), also when outputs share their inputs' bytes as the
// compiled step's buffer plan may make them.
#include "runtime/kernels/cpu/rotary_rms_norm.h"

#include <cstring>
#include <vector>

#include "model/rotary_table.h"
#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/same_bits.h"
#include "runtime/kernels/cpu/rotary.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::ExpectSameBits;

template <typename T>
void ExpectFusedIsUnfused() {
  const RotaryShape s{2, 70, 3, 16};  // 140 tokens: more than one ParallelFor chunk
  const int64_t P = 80, n = s.B * s.T * s.H * s.D;
  const T eps = T(kRmsNormEps);
  std::vector<int32_t> pos(s.B * s.T);
  for (int64_t i = 0; i < s.B * s.T; ++i) pos[i] = int32_t((i * 7) % P);  // packed-like, any order
  std::vector<float> cos(P * s.D / 2), sin(P * s.D / 2);
  compiler::FillRotaryTables(P, s.D, 10000.0, cos.data(), sin.data());
  const testing::Vec rx = testing::Random(n, 3, 4.0), rdy = testing::Random(n, 4);
  const std::vector<T> x(rx.begin(), rx.end()), dy(rdy.begin(), rdy.end());

  // Forward: rotary then rms_norm over D, as the interpreter runs them.
  std::vector<T> rot(n), y(n);
  Rotary(x.data(), pos.data(), rot.data(), s);
  RmsNorm(rot.data(), y.data(), s.B * s.T * s.H, s.D, eps);
  std::vector<T> fused_rot(n), fused_y(n);
  RotaryRmsNorm(x.data(), pos.data(), cos.data(), sin.data(), fused_rot.data(), fused_y.data(), s, eps);
  ExpectSameBits(rot, fused_rot, "rot");
  ExpectSameBits(y, fused_y, "y");
  // y in x's bytes (x dead after the rotary).
  std::vector<T> in_place = x, in_place_rot(n);
  RotaryRmsNorm(in_place.data(), pos.data(), cos.data(), sin.data(), in_place_rot.data(), in_place.data(), s, eps);
  ExpectSameBits(y, in_place, "y written over x");

  // Backward: rms_norm_grad then rotary_grad.
  std::vector<T> g(n), dx(n);
  RmsNormGrad(rot.data(), dy.data(), g.data(), s.B * s.T * s.H, s.D, eps);
  RotaryGrad(g.data(), pos.data(), dx.data(), s);
  std::vector<T> fused_dx(n);
  RmsNormRotaryGrad(rot.data(), dy.data(), pos.data(), cos.data(), sin.data(), fused_dx.data(), s, eps);
  ExpectSameBits(dx, fused_dx, "dx");
  std::vector<T> dx_over_dy = dy;
  RmsNormRotaryGrad(rot.data(), dx_over_dy.data(), pos.data(), cos.data(), sin.data(), dx_over_dy.data(), s, eps);
  ExpectSameBits(dx, dx_over_dy, "dx written over dy");
}

// Under bf16 autocast: the bf16 rotary (the interpreter's Rotary with kBf16), RmsNorm and the
// rounding of its result, from bf16 activations as autocast hands them over.
TEST(RotaryRmsNorm, Bf16IsBitIdenticalToRotaryNormThenRound) {
  const RotaryShape s{2, 70, 2, 128};
  const int64_t P = 160, n = s.B * s.T * s.H * s.D;
  std::vector<int32_t> pos(s.B * s.T);
  for (int64_t i = 0; i < s.B * s.T; ++i) pos[i] = int32_t((i * 13) % P);
  std::vector<float> cos(P * s.D / 2), sin(P * s.D / 2);
  compiler::FillRotaryTables(P, s.D, 10000.0, cos.data(), sin.data());
  const testing::Vec rx = testing::Random(n, 5, 4.0);
  std::vector<float> x(rx.begin(), rx.end());
  for (float& v : x) v = RoundToBf16(v);
  std::vector<float> rot(n), y(n);
  Rotary(x.data(), pos.data(), rot.data(), s, 10000.0, RotaryRounding::kBf16);
  RmsNorm(rot.data(), y.data(), s.B * s.T * s.H, s.D, float(kRmsNormEps));
  RoundBf16(y.data(), y.data(), n);
  std::vector<float> fused_rot(n), fused_y(n);
  RotaryRmsNormRoundBf16(x.data(), pos.data(), cos.data(), sin.data(), fused_rot.data(), fused_y.data(), s,
                         float(kRmsNormEps));
  ExpectSameBits(rot, fused_rot, "rot");
  ExpectSameBits(y, fused_y, "y");
  // The rounded norm written over x.
  std::vector<float> in_place = x, in_place_rot(n);
  RotaryRmsNormRoundBf16(in_place.data(), pos.data(), cos.data(), sin.data(), in_place_rot.data(), in_place.data(), s,
                         float(kRmsNormEps));
  ExpectSameBits(y, in_place, "y written over x");

  // Backward: the cotangent rounded, rms_norm_grad, rounded, the bf16 rotary's VJP.
  const testing::Vec rdy = testing::Random(n, 6);
  const std::vector<float> dy(rdy.begin(), rdy.end());  // not bf16 values: the prologue rounds
  std::vector<float> dyr = dy, g(n), dx(n);
  RoundBf16(dyr.data(), dyr.data(), n);
  RmsNormGrad(rot.data(), dyr.data(), g.data(), s.B * s.T * s.H, s.D, float(kRmsNormEps));
  RoundBf16(g.data(), g.data(), n);
  RotaryGrad(g.data(), pos.data(), dx.data(), s, 10000.0, RotaryRounding::kBf16);
  std::vector<float> fused_dx(n);
  RmsNormRotaryGradOfRoundedDyBf16(rot.data(), dy.data(), pos.data(), cos.data(), sin.data(), fused_dx.data(), s,
                                   float(kRmsNormEps));
  ExpectSameBits(dx, fused_dx, "dx");
  std::vector<float> over_dy = dy;
  RmsNormRotaryGradOfRoundedDyBf16(rot.data(), over_dy.data(), pos.data(), cos.data(), sin.data(), over_dy.data(), s,
                                   float(kRmsNormEps));
  ExpectSameBits(dx, over_dy, "dx written over dy");
}

TEST(RotaryRmsNorm, FloatIsBitIdenticalToTheUnfusedKernels) { ExpectFusedIsUnfused<float>(); }
TEST(RotaryRmsNorm, DoubleIsBitIdenticalToTheUnfusedKernels) { ExpectFusedIsUnfused<double>(); }

}  // namespace
}  // namespace gpt_sft::runtime::kernels
