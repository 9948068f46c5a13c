// The fused bf16 loss row against the chain it replaces, bit for bit: row lengths around the
// 8-, 16- and 32-lane steps, targets at either end and inside, and rows with NaN, infinities,
// huge, tiny and subnormal logits.
#include "runtime/kernels/cpu/softcap_bf16_loss_row.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "runtime/kernels/cpu/cross_entropy_rows.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/same_bits.h"
#include "runtime/kernels/cpu/softcap_bf16.h"
#include "runtime/kernels/cpu/vec_math.h"

namespace gpt_sft::runtime::kernels {
namespace {

void ExpectFusedIsTheChain(const std::vector<float>& logits, int32_t target) {
  const int64_t V = static_cast<int64_t>(logits.size());
  const float cap = 15.0f;
  const double scale = 1.0 / 3.0;
  const float* table = SoftcapBf16Table(cap);
  // The chain: the softcap, the max, the row's loss and f32 gradient, the narrowing.
  std::vector<float> y_chain = logits, grad(V);
  SoftcapBf16Range(table, y_chain.data(), V, cap, /*round_input=*/true, y_chain.data());
  const float m_chain = MaxOf(y_chain.data(), V);
  const double loss_chain =
      cross_entropy_rows::SoftcapBf16RowLossAndGrad(y_chain.data(), target, V, scale, cap, grad.data());
  std::vector<uint16_t> dy_chain(V);
  PrepareBf16Operand(Bf16Gemm::kOneDnn, grad.data(), V, dy_chain.data());
  // The fused row.
  std::vector<float> y = logits, exps(V);
  std::vector<uint16_t> dy(V);
  const float m = SoftcapBf16InPlaceWithMax(table, y.data(), V);
  const double loss = SoftcapBf16RowLossAndNarrowedGrad(y.data(), m, target, V, scale, cap, exps.data(), dy.data());
  EXPECT_EQ(std::memcmp(&m, &m_chain, sizeof m), 0) << m << " vs " << m_chain;
  EXPECT_EQ(std::memcmp(&loss, &loss_chain, sizeof loss), 0) << loss << " vs " << loss_chain;
  testing::ExpectSameBits(y_chain, y, "softcapped logits");
  testing::ExpectSameBits(dy_chain, dy, "dy");
}

std::vector<float> Row(int64_t V, uint32_t seed, float spread) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, spread);
  std::vector<float> row(V);
  for (float& v : row) v = normal(rng);
  return row;
}

TEST(SoftcapBf16LossRow, EqualsTheChainBitForBit) {
  if (!SoftcapBf16LossRowFused()) GTEST_SKIP() << "this CPU has no AVX512_BF16";
  uint32_t seed = 1;
  for (int64_t V : {1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 47, 50, 64, 700, 8192}) {
    for (int32_t target : {0, static_cast<int32_t>(V / 2), static_cast<int32_t>(V - 1)}) {
      for (float spread : {0.5f, 4.0f, 40.0f}) {
        SCOPED_TRACE(::testing::Message() << "V " << V << " target " << target << " spread " << spread);
        ExpectFusedIsTheChain(Row(V, seed++, spread), target);
      }
    }
  }
}

TEST(SoftcapBf16LossRow, EqualsTheChainOnSpecialLogits) {
  if (!SoftcapBf16LossRowFused()) GTEST_SKIP() << "this CPU has no AVX512_BF16";
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float subnormal = std::numeric_limits<float>::denorm_min() * 5;
  for (float special : {nan, inf, -inf, 1e30f, -1e30f, subnormal, -subnormal, 0.0f, -0.0f, 1e-30f}) {
    for (int64_t at : {0, 5, 16, 31, 33, 99}) {
      std::vector<float> row = Row(100, static_cast<uint32_t>(at) + 7, 3.0f);
      row[at] = special;
      SCOPED_TRACE(::testing::Message() << "logit " << special << " at " << at);
      ExpectFusedIsTheChain(row, 33);
      ExpectFusedIsTheChain(row, static_cast<int32_t>(at));
    }
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
