#include "runtime/kernels/cpu/tile_gemm.h"

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/same_bits.h"
#include "runtime/kernels/cpu/tile_gemm_isa.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::Random;

constexpr TileGemmIsa kAllIsas[] = {TileGemmIsa::kPortable, TileGemmIsa::kAvx2, TileGemmIsa::kAvx512};

// Shapes that exercise full and partial row blocks of both vector kernels (6 and 14 rows),
// whole and masked AVX-512 vectors, the one-vector AVX2 panel, the portable column tail,
// k = 0, and attention's tiles: S = Q K^T (64x64, k=128) and P V (64x128, k=64).
const std::vector<std::array<int64_t, 3>> kShapes = {
    {1, 1, 1},   {5, 3, 6},    {6, 16, 4},   {7, 17, 9},    {13, 40, 11},  {15, 24, 5},     {14, 48, 3},
    {29, 57, 7}, {17, 8, 13},  {3, 8, 0},    {33, 100, 17}, {64, 64, 128}, {64, 128, 64}, {37, 37, 128},
    {64, 29, 64}};

// One TileGemm call's operands, with leading dimensions wider than the tile. A is stored
// [k, m] when `transposed_a`.
template <typename T>
struct Operands {
  int64_t m, n, k, lda, ldb, ldc;
  bool transposed_a;
  std::vector<T> a, b, c0;
  Operands(int64_t m_, int64_t n_, int64_t k_, bool transposed)
      : m(m_), n(n_), k(k_), lda((transposed ? m_ : k_) + 3), ldb(n_ + 5), ldc(n_ + 2), transposed_a(transposed) {
    const testing::Vec ad = Random((transposed ? k : m) * lda, 1), bd = Random(k * ldb, 2), cd = Random(m * ldc, 3);
    a.assign(ad.begin(), ad.end());
    b.assign(bd.begin(), bd.end());
    c0.assign(cd.begin(), cd.end());
  }
  std::vector<T> Run(TileGemmIsa isa, bool accumulate) const {
    std::vector<T> c = c0;
    TileGemmWithIsa<T>(isa, transposed_a, m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, accumulate);
    return c;
  }
  // What TileGemm / TileGemmTransposedA (the run-time choice) give.
  std::vector<T> RunDefault(bool accumulate) const {
    std::vector<T> c = c0;
    if (transposed_a) {
      TileGemmTransposedA<T>(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, accumulate);
    } else {
      TileGemm<T>(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, accumulate);
    }
    return c;
  }
  T A(int64_t i, int64_t p) const { return transposed_a ? a[p * lda + i] : a[i * lda + p]; }
};

std::string Describe(int64_t m, int64_t n, int64_t k, bool acc, bool at) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + (acc ? " accumulate" : "") +
         (at ? " transposed A" : "");
}

// C (+)= A B against the triple loop in double; columns past n untouched.
template <typename T>
void CheckAgainstNaive(const Operands<T>& op, const std::vector<T>& c, bool accumulate, double tol,
                       const std::string& what) {
  for (int64_t i = 0; i < op.m; ++i) {
    for (int64_t j = 0; j < op.n; ++j) {
      double want = accumulate ? double(op.c0[i * op.ldc + j]) : 0.0;
      for (int64_t p = 0; p < op.k; ++p) want += double(op.A(i, p)) * double(op.b[p * op.ldb + j]);
      ASSERT_NEAR(c[i * op.ldc + j], want, tol) << what << " at " << i << "," << j;
    }
    for (int64_t j = op.n; j < op.ldc; ++j)
      ASSERT_EQ(c[i * op.ldc + j], op.c0[i * op.ldc + j]) << what << ": wrote past n";
  }
}

template <typename T>
void CheckEveryIsa(double tol) {
  for (auto [m, n, k] : kShapes)
    for (bool acc : {false, true})
      for (bool at : {false, true}) {
        const Operands<T> op(m, n, k, at);
        const std::string what = Describe(m, n, k, acc, at);
        CheckAgainstNaive(op, op.RunDefault(acc), acc, tol, what + " (run-time choice)");
        for (TileGemmIsa isa : kAllIsas)
          if (TileGemmIsaSupported(isa))
            CheckAgainstNaive(op, op.Run(isa, acc), acc, tol, what + " isa " + std::to_string(int(isa)));
      }
}

TEST(TileGemm, EveryKernelMatchesTheTripleLoop) {
  CheckEveryIsa<double>(1e-12);
  CheckEveryIsa<float>(1e-4);
}

// The AVX-512 and AVX2 kernels give the same bits (one FMA chain per element in both), so
// attention's results do not depend on which one the CPU has.
template <typename T>
void CheckVectorKernelsAgree() {
  for (auto [m, n, k] : kShapes)
    for (bool acc : {false, true})
      for (bool at : {false, true}) {
        const Operands<T> op(m, n, k, at);
        const std::string what = Describe(m, n, k, acc, at);
        testing::ExpectSameBits(op.Run(TileGemmIsa::kAvx2, acc), op.Run(TileGemmIsa::kAvx512, acc), what.c_str());
      }
}

TEST(TileGemm, Avx512GivesTheBitsOfAvx2) {
  if (!TileGemmIsaSupported(TileGemmIsa::kAvx512)) GTEST_SKIP() << "this CPU has no AVX-512F";
  CheckVectorKernelsAgree<float>();
  CheckVectorKernelsAgree<double>();
}

// The default kernel is the widest the CPU supports, and its name says which.
TEST(TileGemm, NamesTheKernelItRuns) {
  const TileGemmIsa isa = TileGemmDefaultIsa();
  EXPECT_TRUE(TileGemmIsaSupported(isa));
  EXPECT_TRUE(TileGemmIsaSupported(TileGemmIsa::kPortable));
  if (isa != TileGemmIsa::kAvx512) {
    EXPECT_FALSE(TileGemmIsaSupported(TileGemmIsa::kAvx512));
  }
  const char* want = isa == TileGemmIsa::kAvx512 ? "AVX-512" : isa == TileGemmIsa::kAvx2 ? "AVX2+FMA" : "portable";
  EXPECT_STREQ(TileGemmKernelName(), want);
}

// Float tiles go through 8x8 register blocks on AVX2 CPUs; the edges through the loop.
TEST(TransposeTile, SwapsIndicesOfFloatTilesWithEdges) {
  for (auto [rows, cols] : std::vector<std::array<int64_t, 2>>{{64, 128}, {37, 29}, {8, 8}, {7, 9}, {16, 3}}) {
    const int64_t ld_in = cols + 3, ld_out = rows + 5;
    std::vector<float> in(rows * ld_in), out(cols * ld_out, -1.f);
    for (size_t i = 0; i < in.size(); ++i) in[i] = float(i);
    TransposeTile<float>(rows, cols, in.data(), ld_in, out.data(), ld_out);
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < ld_out; ++i)
        ASSERT_EQ(out[j * ld_out + i], i < rows ? in[i * ld_in + j] : -1.f)
            << rows << "x" << cols << " at " << j << "," << i;
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
