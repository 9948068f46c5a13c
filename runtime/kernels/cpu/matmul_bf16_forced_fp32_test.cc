// GPT_SFT_CPU_BF16_GEMM=fp32 forces the fallback even where oneDNN could run: the bf16
// matmuls are then exactly today's f32 kernels (matmul.h) on the same values.
#include <cstdlib>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

// Set before main, so before the kernel is chosen (once, at first use).
const bool kForced = setenv("GPT_SFT_CPU_BF16_GEMM", "fp32", /*overwrite=*/1) == 0;

std::vector<float> RandomBf16(int64_t n, int seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = RoundToBf16(u(gen));
  return v;
}

TEST(MatmulBf16ForcedFp32, TheOverrideChoosesTheFallback) {
  ASSERT_TRUE(kForced);
  EXPECT_EQ(ActiveBf16Gemm(), Bf16Gemm::kFp32);
  EXPECT_EQ(Bf16GemmDescription().rfind("fp32 (", 0), 0u) << Bf16GemmDescription();
}

TEST(MatmulBf16ForcedFp32, TheKernelsAreTheF32OnesBitForBit) {
  const int64_t M = 300, N = 70, K = 130;  // split over the pool
  const std::vector<float> x = RandomBf16(M * K, 1), w = RandomBf16(N * K, 2), dy = RandomBf16(M * N, 3);
  std::vector<float> y(M * N), y_f32(M * N), dw(N * K), dw_f32(N * K);
  MatmulBf16Inputs(x.data(), w.data(), y.data(), M, N, K);
  Matmul(x.data(), w.data(), y_f32.data(), M, N, K);
  EXPECT_EQ(y, y_f32);
  MatmulGradWeightBf16Inputs(dy.data(), x.data(), dw.data(), M, N, K, /*accumulate=*/false);
  MatmulGradWeight(dy.data(), x.data(), dw_f32.data(), M, N, K, /*accumulate=*/false);
  EXPECT_EQ(dw, dw_f32);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
