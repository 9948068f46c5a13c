// The tiled gemm behind gpt.matmul and gpt.matmul_weight_grad on OpenCL against the
// interpreter (BLAS), on shapes that are and are not multiples of the 64 x 64 x 16 tiles.
// Tolerance: 2e-5 of the largest reference value (fp32 sums of up to a few hundred products
// in another order than BLAS's).
#include <gtest/gtest.h>

#include "absl/strings/str_replace.h"
#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

constexpr double kTolerance = 2e-5;

void ExpectClose(const std::string& ir) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, {});
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    EXPECT_GT(d.max_reference, 0) << d.name;
    EXPECT_LE(d.max_rel_error, kTolerance) << d.name << ": max abs error " << d.max_abs_error << " of " << d.max_reference;
  }
}

std::string MatmulIr(int64_t M, int64_t N, int64_t K) {
  return absl::StrReplaceAll(R"(
    func.func @f(%x: tensor<MxKxf32> {gpt.name = "x"}, %w: tensor<NxKxf32> {gpt.name = "w"},
                 %dy: tensor<MxNxf32> {gpt.name = "dy"})
        -> (tensor<MxNxf32> {gpt.name = "y"}, tensor<NxKxf32> {gpt.name = "dw"}) {
      %y = gpt.matmul %x, %w : tensor<MxKxf32>, tensor<NxKxf32>
      %dw = gpt.matmul_weight_grad %dy, %x : tensor<MxNxf32>, tensor<MxKxf32>
      return %y, %dw : tensor<MxNxf32>, tensor<NxKxf32>
    })", {{"M", std::to_string(M)}, {"N", std::to_string(N)}, {"K", std::to_string(K)}});
}

TEST(MatmulKernelsTest, ShapesOffTheTiles) { ExpectClose(MatmulIr(37, 45, 29)); }

TEST(MatmulKernelsTest, WholeTiles) { ExpectClose(MatmulIr(128, 64, 96)); }

TEST(MatmulKernelsTest, LeadingDimsAreFlattened) {
  ExpectClose(R"(
    func.func @f(%x: tensor<2x33x64xf32> {gpt.name = "x"}, %w: tensor<96x64xf32> {gpt.name = "w"},
                 %dy: tensor<2x33x96xf32> {gpt.name = "dy"})
        -> (tensor<2x33x96xf32> {gpt.name = "y"}, tensor<96x64xf32> {gpt.name = "dw"}) {
      %y = gpt.matmul %x, %w : tensor<2x33x64xf32>, tensor<96x64xf32>
      %dw = gpt.matmul_weight_grad %dy, %x : tensor<2x33x96xf32>, tensor<2x33x64xf32>
      return %y, %dw : tensor<2x33x96xf32>, tensor<96x64xf32>
    })");
}

}  // namespace
}  // namespace gpt_sft::tests
