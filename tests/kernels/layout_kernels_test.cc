// gpt.transpose on OpenCL against the interpreter (Permute): the tiled kernel (the innermost
// dim moves: [1, 0] on shapes off the 32 x 32 tiles, rank-4 perms with batch dims) and the
// gather (the innermost dim stays). A transpose moves bits: tolerance 0 (exact).
#include <gtest/gtest.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

/// Runs y = transpose(x, perm) for x of `shape`, returned, and expects it exact.
void ExpectExact(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  std::vector<int64_t> out_shape;
  for (int64_t p : perm) out_shape.push_back(shape[p]);
  const std::string x_type = absl::StrCat("tensor<", absl::StrJoin(shape, "x"), "xf32>");
  const std::string y_type = absl::StrCat("tensor<", absl::StrJoin(out_shape, "x"), "xf32>");
  const std::string ir = absl::StrReplaceAll(R"(
    func.func @f(%x: XT {gpt.name = "x"}) -> (YT {gpt.name = "y"}) {
      %y = gpt.transpose %x [PERM] : XT
      return %y : YT
    })", {{"XT", x_type}, {"YT", y_type}, {"PERM", absl::StrJoin(perm, ", ")}});
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, {});
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  ASSERT_EQ(diffs->size(), 1u);
  EXPECT_GT((*diffs)[0].max_reference, 0);
  EXPECT_EQ((*diffs)[0].max_abs_error, 0) << "perm [" << absl::StrJoin(perm, ", ") << "]";
}

TEST(LayoutKernelsTest, TwoDimsTiled) {
  ExpectExact({64, 96}, {1, 0});
  ExpectExact({37, 45}, {1, 0});
  ExpectExact({1, 70}, {1, 0});
}

TEST(LayoutKernelsTest, RankFourTiledWithBatchDims) {
  ExpectExact({2, 33, 3, 40}, {0, 2, 3, 1});
  ExpectExact({3, 5, 7, 36}, {3, 2, 1, 0});
}

TEST(LayoutKernelsTest, RankFourGatherKeepsTheInnermostDim) {
  ExpectExact({2, 33, 3, 40}, {0, 2, 1, 3});
  ExpectExact({3, 5, 7, 9}, {2, 0, 1, 3});
}

TEST(LayoutKernelsTest, RankEight) { ExpectExact({2, 3, 2, 1, 3, 2, 2, 5}, {7, 0, 6, 1, 5, 2, 4, 3}); }

}  // namespace
}  // namespace gpt_sft::tests
