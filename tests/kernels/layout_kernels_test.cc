// The layout generator (compiler/lowering/gpu/layout_kernels.cc: gpt.transpose) on OpenCL
// against the interpreter. Tolerance 0: a transpose moves values.
#include <gtest/gtest.h>

#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

TEST(LayoutKernelsTest, Transposes) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(R"(
    func.func @f(%w: tensor<37x45xf32> {gpt.name = "w"}, %x: tensor<2x3x5x7xf32> {gpt.name = "x"})
        -> (tensor<45x37xf32> {gpt.name = "wt"}, tensor<5x2x7x3xf32> {gpt.name = "xp"}) {
      %wt = gpt.transpose %w [1, 0] : tensor<37x45xf32>
      %xp = gpt.transpose %x [2, 0, 3, 1] : tensor<2x3x5x7xf32>
      return %wt, %xp : tensor<45x37xf32>, tensor<5x2x7x3xf32>
    })", {});
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    EXPECT_GT(d.max_reference, 0) << d.name << " is all zero: the test checks nothing";
    EXPECT_EQ(d.max_abs_error, 0) << d.name;
  }
}

}  // namespace
}  // namespace gpt_sft::tests
