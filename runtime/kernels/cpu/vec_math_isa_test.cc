#include "runtime/kernels/cpu/vec_math_isa.h"

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::kernels::vec_math_isa {
namespace {

std::vector<float> Inputs(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-100.f, 12.f);
  std::vector<float> x(n);
  for (float& v : x) v = d(rng);
  if (n > 3) x[3] = -std::numeric_limits<float>::infinity();  // a masked score
  if (n > 5) x[5] = 0.f;
  if (n > 9) x[9] = std::numeric_limits<float>::quiet_NaN();
  if (n > 12) x[12] = 1e30f;
  return x;
}

// The AVX-512 kernels are the AVX2 kernels on wider registers: every element and every sum
// equal bit for bit, for every length (the 16-wide body, an 8-wide step, the tail).
TEST(VecMathIsa, Avx512EqualsAvx2BitForBit) {
  if (!HasAvx512()) GTEST_SKIP() << "this CPU has no AVX512F: only the AVX2 kernels run here";
  for (int64_t n = 0; n <= 70; ++n) {
    const std::vector<float> x = Inputs(n, static_cast<uint32_t>(n) + 1);
    for (float mult : {1.f, 0.0883883476f}) {
      std::vector<float> a(n), b(n);
      const double sa = ExpAffineAvx2(x.data(), n, mult, 1.5f, a.data());
      const double sb = ExpAffineAvx512(x.data(), n, mult, 1.5f, b.data());
      ASSERT_EQ(std::memcmp(&sa, &sb, sizeof(double)), 0) << "exp sum, n = " << n;
      ASSERT_EQ(std::memcmp(a.data(), b.data(), n * sizeof(float)), 0) << "exp, n = " << n;
    }
    std::vector<float> a(n), b(n);
    ScaledTanhAvx2(x.data(), n, 1.f / 15.f, 15.f, a.data());
    ScaledTanhAvx512(x.data(), n, 1.f / 15.f, 15.f, b.data());
    ASSERT_EQ(std::memcmp(a.data(), b.data(), n * sizeof(float)), 0) << "tanh, n = " << n;
  }
}

// The softcap gradient's element expression: scalar, AVX2 and AVX-512 forms equal bit for bit.
TEST(VecMathIsa, ScaleSoftcapGradIsTheScalarExpressionOnEveryIsa) {
  if (!HasAvx2()) GTEST_SKIP() << "this CPU runs neither vector kernel";
  for (int64_t n = 0; n <= 70; ++n) {
    const std::vector<float> y = Inputs(n, 100 + n), g = Inputs(n, 200 + n);
    std::vector<float> scalar = g, avx2 = g, avx512 = g;
    ScaleSoftcapGradScalar(y.data(), n, 0.37f, 15.f, scalar.data());
    ScaleSoftcapGradAvx2(y.data(), n, 0.37f, 15.f, avx2.data());
    ASSERT_EQ(std::memcmp(scalar.data(), avx2.data(), n * sizeof(float)), 0) << "avx2, n = " << n;
    if (!HasAvx512()) continue;
    ScaleSoftcapGradAvx512(y.data(), n, 0.37f, 15.f, avx512.data());
    ASSERT_EQ(std::memcmp(scalar.data(), avx512.data(), n * sizeof(float)), 0) << "avx512, n = " << n;
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels::vec_math_isa
