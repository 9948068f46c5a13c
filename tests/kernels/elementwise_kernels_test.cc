// The elementwise generators (fusions and unfused add/mul/relu²/softcap and their gradients)
// on OpenCL against the interpreter. Tolerance: 2e-6 of the largest reference value
// (single-precision rounding of a few operations; tanh within a few ulp).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gpt_sft::tests
