// The fused QK-norm kernels compute the unfused kernels' bits (the interpreter's Rotary,
// RmsNorm, RmsNormGrad, RotaryGrad), also when outputs share their inputs' bytes as the
// compiled step's buffer plan may make them.
#include "runtime/kernels/cpu/rotary_rms_norm.h"

#include <cstring>
#include <vector>

#include "compiler/numerics/rotary_table.h"
#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/same_bits.h"
#include "runtime/kernels/cpu/rotary.h"

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

TEST(RotaryRmsNorm, FloatIsBitIdenticalToTheUnfusedKernels) { ExpectFusedIsUnfused<float>(); }
TEST(RotaryRmsNorm, DoubleIsBitIdenticalToTheUnfusedKernels) { ExpectFusedIsUnfused<double>(); }

}  // namespace
}  // namespace gpt_sft::runtime::kernels
