#include "runtime/kernels/cpu/tile_gemm.h"

#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::Random;

// C (+)= A B against the triple loop, with leading dimensions wider than the tile, for
// shapes that exercise the 6-row blocks, the two- and one-vector column panels and the tail.
// With `transposed_a`, A is stored [k, m] and TileGemmTransposedA is under test.
template <typename T>
void CheckAgainstNaive(int64_t m, int64_t n, int64_t k, bool accumulate, bool transposed_a, double tol) {
  const int64_t lda = (transposed_a ? m : k) + 3, ldb = n + 5, ldc = n + 2;
  const testing::Vec ad = Random((transposed_a ? k : m) * lda, 1), bd = Random(k * ldb, 2), cd = Random(m * ldc, 3);
  std::vector<T> a(ad.begin(), ad.end()), b(bd.begin(), bd.end()), c(cd.begin(), cd.end());
  const std::vector<T> c0 = c;
  if (transposed_a) {
    TileGemmTransposedA<T>(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, accumulate);
  } else {
    TileGemm<T>(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, accumulate);
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = accumulate ? double(c0[i * ldc + j]) : 0.0;
      for (int64_t p = 0; p < k; ++p)
        want += double(transposed_a ? a[p * lda + i] : a[i * lda + p]) * double(b[p * ldb + j]);
      ASSERT_NEAR(c[i * ldc + j], want, tol) << m << "x" << n << "x" << k << " at " << i << "," << j;
    }
    for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], c0[i * ldc + j]) << "wrote past n";
  }
}

TEST(TileGemm, MatchesTheTripleLoop) {
  for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
           {1, 1, 1}, {5, 3, 6}, {6, 16, 4}, {7, 17, 9}, {13, 40, 11}, {64, 64, 128}, {64, 128, 64}, {3, 8, 0}}) {
    for (bool acc : {false, true})
      for (bool at : {false, true}) {
        CheckAgainstNaive<double>(m, n, k, acc, at, 1e-12);
        CheckAgainstNaive<float>(m, n, k, acc, at, 1e-4);
      }
  }
}

TEST(TransposeTile, SwapsIndices) {
  std::vector<double> in(3 * 7), out(5 * 4, -1.0);
  for (int i = 0; i < 3 * 7; ++i) in[i] = i;
  TransposeTile<double>(3, 5, in.data(), 7, out.data(), 4);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_EQ(out[j * 4 + i], in[i * 7 + j]);
  EXPECT_EQ(out[3], -1.0);  // the padding column is untouched
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
