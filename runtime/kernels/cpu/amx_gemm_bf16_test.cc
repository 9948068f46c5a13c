// AmxGemmBf16 against an exact reference, and its promise that the bits depend on K only:
// * on values whose products and sums are exact in f32 (multiples of 1/8 in [-2, 2], short
//   sums), every layout (A plain or transposed, B plain or transposed), accumulation, and the
//   edges (M, N, K not multiples of the tiles, odd K, K over one chunk) must give the exact
//   sum;
// * on random bf16 values, rows split into blocks, A or C read at another stride, and B
//   packed from either layout must give the same bits as one call;
// * f32 operands (narrowed as they are packed) must give the bits of their bf16 roundings
//   (RoundToBf16, ties to even) given as bits.
// Skipped (with a message) on CPUs without AMX-BF16: the bf16 matmuls then run oneDNN or fp32.
#include "runtime/kernels/cpu/amx_gemm_bf16.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "base/cpu_isa.h"
#include "model/round_to_bf16.h"
#include "gtest/gtest.h"
#include "runtime/kernels/cpu/same_bits.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::ExpectSameBits;

uint16_t Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return static_cast<uint16_t>(u >> 16);
}
float Value(uint16_t b) {
  const uint32_t u = uint32_t(b) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// n bf16 bit patterns: multiples of 1/8 in [-2, 2] (exact), or rounded normal values.
std::vector<uint16_t> Operand(int64_t n, uint32_t seed, bool exact) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> eighths(-16, 16);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<uint16_t> v(n);
  for (auto& b : v) b = Bits(exact ? eighths(rng) / 8.0f : compiler::RoundToBf16(normal(rng)));
  return v;
}

struct Gemm {
  int64_t M, N, K;
  bool trans_a, trans_b;
};

// op(A) (M x K) and op(B) (K x N) element access for the stored layouts, leading dims given.
float A(const Gemm& g, const std::vector<uint16_t>& a, int64_t lda, int64_t m, int64_t k) {
  return Value(g.trans_a ? a[k * lda + m] : a[m * lda + k]);
}
float B(const Gemm& g, const std::vector<uint16_t>& b, int64_t ldb, int64_t k, int64_t n) {
  return Value(g.trans_b ? b[n * ldb + k] : b[k * ldb + n]);
}

std::vector<uint32_t> Packed(const Gemm& g, const std::vector<uint16_t>& b, int64_t ldb) {
  std::vector<uint32_t> packed(AmxPackedBBytes(g.N, g.K) / 4, 0xdeadbeefu);  // padding must be written
  AmxPackB(g.trans_b, g.N, g.K, b.data(), ldb, 0, AmxPackedBBlocks(g.N), packed.data());
  return packed;
}

class AmxGemmBf16Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!AmxGemmBf16Supported()) GTEST_SKIP() << "this CPU has no AMX-BF16 (or Linux refused the tile state)";
  }
};

TEST_F(AmxGemmBf16Test, ExactSumsOnEveryLayoutAndEdge) {
  const Gemm shapes[] = {{32, 32, 32, false, false}, {64, 96, 256, false, true}, {37, 50, 16, false, false},
                         {5, 7, 3, true, false},     {33, 31, 64, true, true},   {70, 40, 1030, false, true},
                         {48, 64, 1100, true, false}, {1, 1, 1, false, false},  {16, 33, 31, false, true}};
  for (const Gemm& g : shapes)
    for (bool accumulate : {false, true}) {
      SCOPED_TRACE(::testing::Message() << g.M << "x" << g.N << "x" << g.K << " trans_a " << g.trans_a << " trans_b "
                                        << g.trans_b << " accumulate " << accumulate);
      const int64_t lda = (g.trans_a ? g.M : g.K) + 3, ldb = (g.trans_b ? g.K : g.N) + 5, ldc = g.N + 2;
      const std::vector<uint16_t> a = Operand((g.trans_a ? g.K : g.M) * lda, 1, true);
      const std::vector<uint16_t> b = Operand((g.trans_b ? g.N : g.K) * ldb, 2, true);
      std::vector<float> c(g.M * ldc), want(g.M * ldc);
      for (int64_t i = 0; i < g.M * ldc; ++i) c[i] = want[i] = float(i % 7) - 3.0f;
      for (int64_t m = 0; m < g.M; ++m)
        for (int64_t n = 0; n < g.N; ++n) {
          double sum = accumulate ? want[m * ldc + n] : 0.0;
          for (int64_t k = 0; k < g.K; ++k) sum += double(A(g, a, lda, m, k)) * B(g, b, ldb, k, n);
          want[m * ldc + n] = float(sum);
        }
      const std::vector<uint32_t> packed = Packed(g, b, ldb);
      AmxGemmBf16(g.trans_a, g.M, g.N, g.K, a.data(), lda, packed.data(), accumulate, c.data(), ldc);
      ExpectSameBits(want, c, "C (the columns past N untouched)");
    }
}

TEST_F(AmxGemmBf16Test, BitsDependOnKOnly) {
  for (const Gemm& g : {Gemm{96, 64, 1024, false, true}, Gemm{80, 48, 700, true, false}}) {
    SCOPED_TRACE(::testing::Message() << g.M << "x" << g.N << "x" << g.K << " trans_a " << g.trans_a);
    const int64_t lda = g.trans_a ? g.M : g.K;
    const std::vector<uint16_t> a = Operand(g.M * g.K, 3, false), bt = Operand(g.N * g.K, 4, false);
    // B given stored [N, K] (trans_b) and as its transpose [K, N]: the same packed bits.
    std::vector<uint16_t> b(g.K * g.N);
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t k = 0; k < g.K; ++k) b[k * g.N + n] = bt[n * g.K + k];
    const std::vector<uint32_t> packed = Packed({g.M, g.N, g.K, false, true}, bt, g.K);
    ExpectSameBits(packed, Packed({g.M, g.N, g.K, false, false}, b, g.N), "B packed from either layout");

    std::vector<float> whole(g.M * g.N);
    AmxGemmBf16(g.trans_a, g.M, g.N, g.K, a.data(), lda, packed.data(), false, whole.data(), g.N);
    // Rows in blocks of 16 and 24 (odd groups, a padded last group), C at a wider stride.
    for (int64_t rows : {16, 24}) {
      const int64_t ldc = g.N + 16;
      std::vector<float> wide(g.M * ldc), split(g.M * g.N);
      for (int64_t m0 = 0; m0 < g.M; m0 += rows) {
        const int64_t m1 = std::min(g.M, m0 + rows);
        const uint16_t* a0 = g.trans_a ? a.data() + m0 : a.data() + m0 * lda;
        AmxGemmBf16(g.trans_a, m1 - m0, g.N, g.K, a0, lda, packed.data(), false, wide.data() + m0 * ldc, ldc);
      }
      for (int64_t m = 0; m < g.M; ++m) std::memcpy(split.data() + m * g.N, wide.data() + m * ldc, g.N * 4);
      ExpectSameBits(whole, split, "C from blocks of rows");
    }
  }
}

TEST_F(AmxGemmBf16Test, F32OperandsGiveTheBitsOfTheirRoundings) {
  if (!CpuIsaAtLeast(CpuIsa::kAvx512Bf16)) GTEST_SKIP() << "the f32 packing needs AVX512_BF16";
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (const Gemm& g : {Gemm{70, 45, 100, false, true}, Gemm{40, 64, 1030, true, false}}) {
    SCOPED_TRACE(::testing::Message() << g.M << "x" << g.N << "x" << g.K << " trans_a " << g.trans_a);
    const int64_t lda = (g.trans_a ? g.M : g.K) + 1, ldb = (g.trans_b ? g.K : g.N) + 2;
    std::vector<float> a((g.trans_a ? g.K : g.M) * lda), b((g.trans_b ? g.N : g.K) * ldb);
    for (float& x : a) x = normal(rng);
    for (float& x : b) x = normal(rng);
    a[0] = 1.0f + std::ldexp(1.0f, -8);  // ties: to even, down and up
    b[0] = 1.0f + 3 * std::ldexp(1.0f, -8);
    std::vector<uint16_t> a_bits(a.size()), b_bits(b.size());
    for (size_t i = 0; i < a.size(); ++i) a_bits[i] = Bits(compiler::RoundToBf16(a[i]));
    for (size_t i = 0; i < b.size(); ++i) b_bits[i] = Bits(compiler::RoundToBf16(b[i]));
    const std::vector<uint32_t> want_b = Packed(g, b_bits, ldb);
    std::vector<uint32_t> got_b(want_b.size());
    AmxPackB(g.trans_b, g.N, g.K, b.data(), ldb, 0, AmxPackedBBlocks(g.N), got_b.data());
    ExpectSameBits(want_b, got_b, "B packed from f32");
    std::vector<float> want(g.M * g.N), got(g.M * g.N);
    AmxGemmBf16(g.trans_a, g.M, g.N, g.K, a_bits.data(), lda, want_b.data(), false, want.data(), g.N);
    AmxGemmBf16(g.trans_a, g.M, g.N, g.K, a.data(), lda, want_b.data(), false, got.data(), g.N);
    ExpectSameBits(want, got, "C from an f32 A");
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
