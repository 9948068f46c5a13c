// The tiled gemm behind gpt.matmul and gpt.matmul_weight_grad on OpenCL against the
// interpreter (BLAS), on shapes that are and are not multiples of the 64 x 64 x 16 tiles, and
// with what the matmul kernels take over from their neighbours (matmul_fusion.h): the input
// gradient's transposed weight read in place, a residual add, a softcap, a fusion region and
// the gradient accumulation computed in the epilogue.
// Tolerance: 2e-5 of the largest reference value (fp32 sums of up to a few hundred products
// in another order than BLAS's; the epilogues add one rounding each, as the unfused ops do).
#include <gtest/gtest.h>

#include <iostream>

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
    std::cout << "  " << d.name << ": max rel error " << d.max_rel_error << "\n";
    EXPECT_GT(d.max_reference, 0) << d.name;
    EXPECT_LE(d.max_rel_error, kTolerance) << d.name << ": max abs error " << d.max_abs_error << " of " << d.max_reference;
  }
}

/// y = x w^T and dw = dy^T x for x [M, K], w [N, K], dy [M, N].
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

TEST(MatmulKernelsTest, DegenerateShapes) {
  ExpectClose(MatmulIr(1, 1, 1));
  ExpectClose(MatmulIr(1, 70, 3));
  ExpectClose(MatmulIr(65, 1, 17));
}

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

// The backward's shape of the input gradient: dx = dy (w^T)^T with the transpose folded into
// the gemm; the same transpose also returned (so materialised) in the second function.
TEST(MatmulKernelsTest, InputGradientReadsTheWeightInPlace) {
  const std::string ir = R"(
    func.func @f(%dy: tensor<2x33x96xf32> {gpt.name = "dy"}, %w: tensor<96x64xf32> {gpt.name = "w"})
        -> (tensor<2x33x64xf32> {gpt.name = "dx"}) {
      %wt = gpt.transpose %w [1, 0] : tensor<96x64xf32>
      %dx = gpt.matmul %dy, %wt : tensor<2x33x96xf32>, tensor<64x96xf32>
      return %dx : tensor<2x33x64xf32>
    }
    func.func @g(%dy: tensor<2x33x96xf32> {gpt.name = "dy"}, %w: tensor<96x64xf32> {gpt.name = "w"})
        -> (tensor<2x33x64xf32> {gpt.name = "dx"}, tensor<64x96xf32> {gpt.name = "wt"}) {
      %wt = gpt.transpose %w [1, 0] : tensor<96x64xf32>
      %dx = gpt.matmul %dy, %wt : tensor<2x33x96xf32>, tensor<64x96xf32>
      return %dx, %wt : tensor<2x33x64xf32>, tensor<64x96xf32>
    })";
  ExpectClose(ir);
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  KernelRun run;
  run.function = "g";
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, run);
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) EXPECT_LE(d.max_rel_error, kTolerance) << d.name;
}

// Epilogues: a residual add and a softcap right after their matmuls (the first matmul's result
// also returned, so stored too), a fusion region of two adds, and the weight gradient added
// into its donated accumulator with other ops in between.
TEST(MatmulKernelsTest, EpiloguesMatchTheUnfusedOps) {
  ExpectClose(R"(
    func.func @f(%x: tensor<37x29xf32> {gpt.name = "x"}, %w: tensor<45x29xf32> {gpt.name = "w"},
                 %h: tensor<37x45xf32> {gpt.name = "h"}, %w2: tensor<45x45xf32> {gpt.name = "w2"},
                 %dy: tensor<37x45xf32> {gpt.name = "dy"}, %acc: tensor<45x29xf32> {gpt.name = "grad/w"})
        -> (tensor<37x45xf32> {gpt.name = "y"}, tensor<37x45xf32> {gpt.name = "r"},
            tensor<37x45xf32> {gpt.name = "s"}, tensor<37x45xf32> {gpt.name = "t"},
            tensor<45x29xf32> {gpt.name = "grad/w"}) {
      %y = gpt.matmul %x, %w : tensor<37x29xf32>, tensor<45x29xf32>
      %r = gpt.add %h, %y : tensor<37x45xf32>, tensor<37x45xf32>
      %dw = gpt.matmul_weight_grad %dy, %x : tensor<37x45xf32>, tensor<37x29xf32>
      %z = gpt.matmul %r, %w2 : tensor<37x45xf32>, tensor<45x45xf32>
      %s = gpt.softcap %z {cap = 2.0 : f64} : tensor<37x45xf32>
      %u = gpt.matmul %s, %w2 : tensor<37x45xf32>, tensor<45x45xf32>
      %t = gpt.fusion (%u, %h, %r) : (tensor<37x45xf32>, tensor<37x45xf32>, tensor<37x45xf32>) -> tensor<37x45xf32> {
      ^bb0(%a: tensor<37x45xf32>, %b: tensor<37x45xf32>, %c: tensor<37x45xf32>):
        %0 = gpt.add %a, %b : tensor<37x45xf32>, tensor<37x45xf32>
        %1 = gpt.mul %0, %c : tensor<37x45xf32>, tensor<37x45xf32>
        gpt.yield %1 : tensor<37x45xf32>
      }
      %a = gpt.add %acc, %dw : tensor<45x29xf32>, tensor<45x29xf32>
      return %y, %r, %s, %t, %a : tensor<37x45xf32>, tensor<37x45xf32>, tensor<37x45xf32>, tensor<37x45xf32>, tensor<45x29xf32>
    })");
}

}  // namespace
}  // namespace gpt_sft::tests
