// The elementwise generators (fusions and unfused add/mul/relu²/softcap and their gradients,
// round_bf16) on OpenCL against the interpreter. Tolerance: 2e-6 of the largest reference
// value (single-precision rounding of a few operations; tanh within a few ulp); round_bf16
// is integer code on both sides, so it must agree exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

constexpr double kTolerance = 2e-6;

void ExpectClose(const std::string& ir) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, {});
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    EXPECT_LT(d.max_rel_error, kTolerance) << d.name << ": max abs error " << d.max_abs_error << " of "
                                           << d.max_reference;
  }
}

TEST(ElementwiseKernelsTest, UnfusedOpsMatchTheInterpreter) {
  ExpectClose(R"(
    func.func @f(%a: tensor<4x37xf32> {gpt.name = "a"}, %b: tensor<4x37xf32> {gpt.name = "b"})
        -> (tensor<4x37xf32> {gpt.name = "sum"}, tensor<4x37xf32> {gpt.name = "product"},
            tensor<4x37xf32> {gpt.name = "relu2"}, tensor<4x37xf32> {gpt.name = "relu2_grad"},
            tensor<4x37xf32> {gpt.name = "softcap"}, tensor<4x37xf32> {gpt.name = "softcap_grad"}) {
      %0 = gpt.add %a, %b : tensor<4x37xf32>, tensor<4x37xf32>
      %1 = gpt.mul %a, %b : tensor<4x37xf32>, tensor<4x37xf32>
      %2 = gpt.relu_square %a : tensor<4x37xf32>
      %3 = gpt.relu_square_grad %a, %b : tensor<4x37xf32>, tensor<4x37xf32>
      %4 = gpt.softcap %a {cap = 0.5 : f64} : tensor<4x37xf32>
      %5 = gpt.softcap_grad %4, %b {cap = 0.5 : f64} : tensor<4x37xf32>, tensor<4x37xf32>
      return %0, %1, %2, %3, %4, %5 : tensor<4x37xf32>, tensor<4x37xf32>, tensor<4x37xf32>, tensor<4x37xf32>, tensor<4x37xf32>, tensor<4x37xf32>
    })");
}

TEST(ElementwiseKernelsTest, AFusionRegionMatchesTheInterpreter) {
  ExpectClose(R"(
    func.func @f(%a: tensor<2x8x64xf32> {gpt.name = "a"}, %b: tensor<2x8x64xf32> {gpt.name = "b"})
        -> (tensor<2x8x64xf32> {gpt.name = "y"}, tensor<2x8x64xf32> {gpt.name = "z"}) {
      %y, %z = gpt.fusion(%a, %b) : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
      ^bb0(%x: tensor<2x8x64xf32>, %w: tensor<2x8x64xf32>):
        %s = gpt.add %x, %w : tensor<2x8x64xf32>, tensor<2x8x64xf32>
        %c = gpt.softcap %s {cap = 2.0 : f64} : tensor<2x8x64xf32>
        %r = gpt.relu_square %c : tensor<2x8x64xf32>
        gpt.yield %r, %c : tensor<2x8x64xf32>, tensor<2x8x64xf32>
      }
      return %y, %z : tensor<2x8x64xf32>, tensor<2x8x64xf32>
    })");
}

TEST(ElementwiseKernelsTest, RoundBf16IsExactIncludingTies) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  // Every other value is an exact tie between two bf16 neighbours (1 + (k + 1/2) 2^-7, and
  // its negative), where only ties-to-even decides; the rest are plain values.
  std::vector<float> x(4 * 64);
  for (size_t i = 0; i < x.size(); ++i) {
    const float tie = 1.0f + (static_cast<float>(i / 2) + 0.5f) * std::ldexp(1.0f, -7);
    x[i] = i % 2 == 0 ? (i % 4 == 0 ? tie : -tie) : std::sin(static_cast<float>(i)) * 1000.0f;
  }
  KernelRun run;
  run.inputs["x"] = runtime::Tensor::FromVector<float>({4, 64}, x);
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(R"(
    func.func @f(%x: tensor<4x64xf32> {gpt.name = "x"}, %b: tensor<4x64xf32> {gpt.name = "b"})
        -> (tensor<4x64xf32> {gpt.name = "rounded"}, tensor<4x64xf32> {gpt.name = "sum_rounded"}) {
      %r = gpt.round_bf16 %x : tensor<4x64xf32>
      %s = gpt.add %x, %b : tensor<4x64xf32>, tensor<4x64xf32>
      %t = gpt.round_bf16 %s : tensor<4x64xf32>
      return %r, %t : tensor<4x64xf32>, tensor<4x64xf32>
    })", run);
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) EXPECT_EQ(d.max_abs_error, 0.0) << d.name;
}

}  // namespace
}  // namespace gpt_sft::tests
