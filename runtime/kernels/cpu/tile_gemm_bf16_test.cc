// The bf16 tile GEMM's kernels (each the CPU has) against a double-precision product of the same bf16 values,
// on shapes with odd k, partial row blocks and masked column tails, A plain and transposed.
#include "runtime/kernels/cpu/tile_gemm_bf16.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/cpu_isa.h"
#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

std::vector<float> RandomBf16(int64_t n, uint32_t seed) {
  const testing::Vec v = testing::Random(n, seed, 2.0);
  std::vector<float> x(v.begin(), v.end());
  RoundBf16(x.data(), x.data(), n);
  return x;
}

// Every element within 1e-6 of sum_p |a b| (f32 sums of exact products) of the double
// product, and nothing written past n.
void Check(Bf16TileKernel kernel, int64_t m, int64_t n, int64_t k, bool transposed_a, bool accumulate) {
  const int64_t lda = (transposed_a ? m : k) + 3, ldb = n + 5, ldc = n + 2;
  const std::vector<float> a = RandomBf16((transposed_a ? k : m) * lda, 1), b = RandomBf16(k * ldb, 2),
                           c0 = RandomBf16(m * ldc, 3);
  std::vector<float> c = c0;
  std::vector<uint16_t> scratch(TileGemmBf16ScratchElements(m, n, k));
  TileGemmBf16(m, n, k, a.data(), lda, transposed_a, b.data(), ldb, c.data(), ldc, accumulate, scratch.data(), kernel);
  const char* name = kernel == Bf16TileKernel::kAmx ? "amx " : kernel == Bf16TileKernel::kDpBf16 ? "dpbf16 " : "fp32 ";
  const std::string what = std::string(name) + std::to_string(m) +
                           "x" + std::to_string(n) + "x" + std::to_string(k) + (transposed_a ? " A^T" : "") +
                           (accumulate ? " accumulate" : "");
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = accumulate ? c0[i * ldc + j] : 0.0, magnitude = std::abs(want);
      for (int64_t p = 0; p < k; ++p) {
        const double prod = double(transposed_a ? a[p * lda + i] : a[i * lda + p]) * b[p * ldb + j];
        want += prod;
        magnitude += std::abs(prod);
      }
      ASSERT_NEAR(c[i * ldc + j], want, 1e-6 * magnitude + 1e-30) << what << " at " << i << "," << j;
    }
    for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], c0[i * ldc + j]) << what << ": wrote past n";
  }
}

TEST(TileGemmBf16, EveryKernelMatchesTheDoubleProduct) {
  for (Bf16TileKernel kernel : {Bf16TileKernel::kAmx, Bf16TileKernel::kDpBf16, Bf16TileKernel::kFp32}) {
    if (!Bf16TileKernelSupported(kernel)) continue;
    for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{{1, 1, 1},
                                                              {5, 3, 6},
                                                              {14, 32, 2},
                                                              {15, 33, 7},
                                                              {29, 17, 13},
                                                              {3, 48, 0},
                                                              {64, 64, 128},
                                                              {64, 128, 64},
                                                              {37, 128, 37}})
      for (bool transposed : {false, true})
        for (bool accumulate : {false, true}) Check(kernel, m, n, k, transposed, accumulate);
  }
}

// Operands packed beforehand give the bits of the kernel packing them itself.
TEST(TileGemmBf16, PackedOperandsGiveTheSameBits) {
  for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{{64, 64, 128}, {64, 128, 64}, {37, 29, 13}, {5, 70, 3}})
    for (bool transposed : {false, true}) {
      const int64_t lda = (transposed ? m : k) + 3, ldb = n + 5;
      const std::vector<float> a = RandomBf16((transposed ? k : m) * lda, 4), b = RandomBf16(k * ldb, 5),
                               c0 = RandomBf16(m * n, 6);
      std::vector<uint16_t> scratch(TileGemmBf16ScratchElements(m, n, k));
      std::vector<uint32_t> pa(PackedBf16AElements(m, k)), pb(PackedBf16BElements(k, n));
      const bool pack = CpuIsaAtLeast(CpuIsa::kAvx512);  // the packers' level; below it, none
      if (pack && !transposed) PackBf16A(m, k, a.data(), lda, pa.data());
      if (pack) PackBf16B(k, n, b.data(), ldb, pb.data());
      std::vector<float> want = c0, got = c0;
      TileGemmBf16(m, n, k, a.data(), lda, transposed, b.data(), ldb, want.data(), n, true, scratch.data());
      TileGemmBf16Packed(m, n, k, a.data(), lda, transposed, pack && !transposed ? pa.data() : nullptr, b.data(),
                         ldb, pack ? pb.data() : nullptr, got.data(), n, true, scratch.data());
      EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
          << m << "x" << n << "x" << k << (transposed ? " A^T" : "");
    }
}

// B packed from its transpose (attention's K^T tiles from K) is B packed: every element,
// the zero padding included (the output starts as garbage).
TEST(TileGemmBf16, PackingFromTheTransposeGivesTheSameBits) {
  if (!CpuIsaAtLeast(CpuIsa::kAvx512)) GTEST_SKIP() << "packing needs AVX-512, above " << CpuIsaDescription();
  for (auto [k, n] : std::vector<std::array<int64_t, 2>>{{128, 64}, {64, 64}, {1, 1}, {13, 37}, {33, 70}, {70, 5}}) {
    const int64_t ldbt = k + 3;
    const std::vector<float> bt = RandomBf16(n * ldbt, 7);
    std::vector<float> b(k * n);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) b[p * n + j] = bt[j * ldbt + p];
    std::vector<uint32_t> want(PackedBf16BElements(k, n), 0xdeadbeef), got(want.size(), 0xfeedface);
    PackBf16B(k, n, b.data(), n, want.data());
    PackBf16BTransposed(k, n, bt.data(), ldbt, got.data());
    EXPECT_EQ(want, got) << "k=" << k << " n=" << n;
  }
}

// A stored transposed (packed by a register transpose) gives the bits of A stored plain.
TEST(TileGemmBf16, TransposedAGivesThePlainBits) {
  if (!Bf16TileKernelSupported(Bf16TileKernel::kAmx)) GTEST_SKIP() << "no AMX";
  for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{{64, 128, 64}, {64, 64, 64}, {37, 29, 13}, {5, 70, 35}}) {
    const std::vector<float> at = RandomBf16(k * m, 8), b = RandomBf16(k * n, 9);
    std::vector<float> a(m * k);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) a[i * k + p] = at[p * m + i];
    std::vector<uint16_t> scratch(TileGemmBf16ScratchElements(m, n, k));
    std::vector<float> want(m * n), got(m * n);
    TileGemmBf16(m, n, k, a.data(), k, false, b.data(), n, want.data(), n, false, scratch.data(), Bf16TileKernel::kAmx);
    TileGemmBf16(m, n, k, at.data(), m, true, b.data(), n, got.data(), n, false, scratch.data(), Bf16TileKernel::kAmx);
    EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0) << m << "x" << n << "x" << k;
  }
}

TEST(TileGemmBf16, NamesTheKernelItRuns) {
  EXPECT_TRUE(Bf16TileKernelSupported(ActiveBf16TileKernel()));
  const Bf16TileKernel active = ActiveBf16TileKernel();
  EXPECT_STREQ(Bf16TileKernelName(), active == Bf16TileKernel::kAmx      ? "AMX"
                                     : active == Bf16TileKernel::kDpBf16 ? "AVX512_BF16"
                                                                         : "fp32 FMA");
  // AMX where the CPU (and the OS) allow it, else the f32 FMA kernel: vdpbf16ps only on
  // request (GPT_SFT_CPU_BF16_TILE, which a run of this test may set to try each kernel).
  if (std::getenv("GPT_SFT_CPU_BF16_TILE") == nullptr) {
    EXPECT_EQ(active, Bf16TileKernelSupported(Bf16TileKernel::kAmx) ? Bf16TileKernel::kAmx : Bf16TileKernel::kFp32);
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
