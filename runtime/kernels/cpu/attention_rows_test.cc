// The row steps' vector loops against their scalar loops, byte for byte, at lengths with
// and without a masked tail; and the mask against its definition.
#include "runtime/kernels/cpu/attention_rows.h"

#include "model/round_to_bf16.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/same_bits.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::ExpectSameBits;

constexpr int64_t kLengths[] = {0, 1, 7, 15, 16, 17, 37, 64, 100, 128};

std::vector<float> RandomFloats(int64_t n, uint32_t seed, double scale = 1.0) {
  const testing::Vec v = testing::Random(n, seed, scale);
  return std::vector<float>(v.begin(), v.end());
}

// Runs `step` on a copy of `x` by both paths and compares the bytes.
template <typename Step>
void ExpectPathsAgree(const std::vector<float>& x, Step step, const std::string& what) {
  std::vector<float> vec = x, scalar = x;
  step(vec.data(), RowPath::kAuto);
  step(scalar.data(), RowPath::kScalar);
  ExpectSameBits(scalar, vec, what.c_str());
}

TEST(AttentionRows, VectorAndScalarPathsGiveTheSameBits) {
  if (!AttentionRowsUseAvx512()) GTEST_SKIP() << "no AVX-512F: kAuto is the scalar loop";
  for (int64_t n : kLengths) {
    const std::string at = " n=" + std::to_string(n);
    const std::vector<float> x = RandomFloats(n, 1, 3.0), p = RandomFloats(n, 2), acc = RandomFloats(n, 3, 50.0);
    ExpectPathsAgree(x, [&](float* y, RowPath path) { ScaleRow(y, n, 0.3183f, path); }, "scale" + at);
    ExpectPathsAgree(
        std::vector<float>(n), [&](float* y, RowPath path) { DivideRow(acc.data(), n, 7.123456789, y, path); },
        "divide" + at);
    std::vector<float> special = x;  // ties, a NaN, infinities, a value past bf16's range
    if (n >= 5) special[0] = 1.00390625f, special[1] = std::nanf(""), special[2] = 3.4e38f,
                special[3] = -std::numeric_limits<float>::infinity(), special[4] = 1.01171875f;
    ExpectPathsAgree(special, [&](float* y, RowPath path) { RoundRowToBf16(y, n, path); }, "round" + at);
    ExpectPathsAgree(x, [&](float* y, RowPath path) { ScoreGradRow(p.data(), y, n, 0.25f, 0.0884f, y, path); },
                     "score grad" + at);
    std::vector<int32_t> ids(n);
    for (int64_t j = 0; j < n; ++j) ids[j] = int32_t(j / 5 % 3);
    for (int64_t end : {int64_t(-3), int64_t(0), n / 2, n, n + 9})
      for (const int32_t* key_ids : {static_cast<const int32_t*>(nullptr), static_cast<const int32_t*>(ids.data())})
        ExpectPathsAgree(x, [&](float* y, RowPath path) { MaskRow(y, n, end, key_ids, 1, path); },
                         "mask" + at + " end=" + std::to_string(end) + (key_ids ? " with ids" : ""));
  }
}

// The fused bf16 steps against the chains they stand for (kScalar runs the chain), byte for
// byte, on tiles of 3 rows: masked (-inf) keys, a NaN, scores past exp's range, ties for the
// max, and (for the forward's exps) a row skipped by its -inf shift.
TEST(AttentionRows, FusedBf16StepsGiveTheirChainsBits) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  constexpr int64_t kRows = 3;
  for (int64_t n : kLengths) {
    const std::string at = " n=" + std::to_string(n);
    std::vector<float> x = RandomFloats(kRows * n, 4, 30.0);
    for (int64_t j = n / 2 + 1; j < n; ++j) x[j] = neg_inf;  // a causal row: the future masked
    if (n >= 3) x[n + 1] = x[n + 2] = 40.f;                  // a tie for the max
    std::vector<float> wide = x;  // values whose exp underflows or overflows, and a NaN
    if (n >= 6) wide[2 * n + 3] = -200.f, wide[2 * n + 4] = 150.f, wide[2 * n + 5] = std::nanf("");
    const float shifts[kRows] = {3.5f, neg_inf, -1.25f}, lse[kRows] = {3.5f, 0.f, -1.25f};
    const float deltas[kRows] = {0.375f, -2.f, 0.f};
    if (n >= 1) {
      const float scale = 0.08838834764831845f;
      for (const std::vector<float>* in : {&x, &wide}) {
        float maxes[2][kRows];
        ExpectPathsAgree(*in, [&](float* y, RowPath path) {
          ScaleRowsAndMax(y, kRows, n, scale, maxes[path == RowPath::kScalar], path);
        }, "scale and max" + at);
        EXPECT_EQ(std::memcmp(maxes[0], maxes[1], sizeof maxes[0]), 0) << "maxes" << at;
      }
    }
    for (const std::vector<float>* in : {&x, &wide}) {
      double sums[2][kRows];
      std::vector<uint16_t> bf16[2] = {std::vector<uint16_t>(kRows * (n + 2), 7),
                                       std::vector<uint16_t>(kRows * (n + 2), 7)};
      ExpectPathsAgree(*in, [&](float* y, RowPath path) {
        const int scalar = path == RowPath::kScalar;
        ExpRowsRoundedToBf16(y, kRows, n, shifts, sums[scalar], bf16[scalar].data(), n + 2, path);
      }, "exp rounded" + at);
      EXPECT_EQ(std::memcmp(sums[0], sums[1], sizeof sums[0]), 0) << "exp's sums" << at;
      EXPECT_EQ(bf16[0], bf16[1]) << "exp's bf16 rows" << at;
      std::vector<float> rounded = *in;  // the bf16 rows: the rounded rows' top halves, 0 where skipped
      ExpRowsRoundedToBf16(rounded.data(), kRows, n, shifts, sums[0]);
      for (int64_t r = 0; r < kRows; ++r)
        for (int64_t j = 0; j < n; ++j) {
          uint32_t bits;
          std::memcpy(&bits, &rounded[r * n + j], sizeof bits);
          ASSERT_EQ(bf16[0][r * (n + 2) + j], shifts[r] == neg_inf ? 0 : bits >> 16) << r << "," << j << at;
        }
      for (int64_t r = 0; r < kRows; ++r) EXPECT_EQ(bf16[0][r * (n + 2) + n], 7) << "wrote past n" << at;
      ExpectPathsAgree(*in, [&](float* y, RowPath path) { ScaledExpRows(y, kRows, n, 0.125f, lse, path); },
                       "scaled exp" + at);
    }
    const std::vector<float> p = RandomFloats(kRows * n, 5, 0.5), dp = RandomFloats(kRows * n, 6);
    std::vector<float> ds_vec(kRows * n), ds_scalar(kRows * n), p_vec = p, p_scalar = p;
    ScoreGradRowsRoundedToBf16(p_vec.data(), dp.data(), kRows, n, deltas, ds_vec.data(), RowPath::kAuto);
    ScoreGradRowsRoundedToBf16(p_scalar.data(), dp.data(), kRows, n, deltas, ds_scalar.data(), RowPath::kScalar);
    ExpectSameBits(ds_scalar, ds_vec, ("score grad rounded" + at).c_str());
    ExpectSameBits(p_scalar, p_vec, ("probabilities rounded" + at).c_str());
  }
}

// Delta's dots: 8 rows per vector pass against row by row, byte for byte, at row lengths
// with and without a tail, row counts with and without leftover rows; and the definition.
TEST(AttentionRows, RoundedRowDotsGiveTheRowByRowBits) {
  for (int64_t n : kLengths)
    for (int64_t rows : {1, 8, 11, 16}) {
      const std::vector<float> out = RandomFloats(rows * n, 21, 3.0), dout = RandomFloats(rows * n, 22, 1e-3);
      std::vector<double> vec(rows), scalar(rows);
      RoundedRowDots(out.data(), dout.data(), rows, n, vec.data(), RowPath::kAuto);
      RoundedRowDots(out.data(), dout.data(), rows, n, scalar.data(), RowPath::kScalar);
      ExpectSameBits(scalar, vec, ("row dots n=" + std::to_string(n) + " rows=" + std::to_string(rows)).c_str());
      for (int64_t r = 0; r < rows; ++r) {
        double want = 0;
        for (int64_t d = 0; d < n; ++d) want += double(dout[r * n + d]) * compiler::RoundToBf16(out[r * n + d]);
        ASSERT_EQ(scalar[r], want) << r;
      }
    }
}

TEST(AttentionRows, MaskHidesTheFutureAndOtherSegments) {
  const int64_t n = 40;
  std::vector<int32_t> ids(n);
  for (int64_t j = 0; j < n; ++j) ids[j] = j < 12 ? 4 : j < 30 ? 5 : 6;
  for (RowPath path : {RowPath::kAuto, RowPath::kScalar}) {
    std::vector<float> s(n, 1.f);
    MaskRow(s.data(), n, 33, ids.data(), 5, path);
    for (int64_t j = 0; j < n; ++j) {
      const bool visible = j < 33 && ids[j] == 5;
      EXPECT_EQ(s[j], visible ? 1.f : -std::numeric_limits<float>::infinity()) << j;
    }
  }
}

TEST(AttentionRows, RoundsToBf16AsRoundToBf16Does) {
  std::vector<float> x = RandomFloats(37, 9, 100.0);
  const std::vector<float> x0 = x;
  RoundRowToBf16(x.data(), 37);
  for (int j = 0; j < 37; ++j) EXPECT_EQ(x[j], compiler::RoundToBf16(x0[j])) << j;
}

TEST(AttentionRows, DoubleRowsComputeTheirDefinitions) {
  const std::vector<double> p = {0.5, 0.25, 0.125}, dp = {1.0, 2.0, 3.0}, acc = {3.0, 6.0, 9.0};
  std::vector<double> ds(3), out(3), x = {1.0, 2.0, 4.0};
  ScoreGradRow(p.data(), dp.data(), 3, 1.0, 2.0, ds.data());
  EXPECT_EQ(ds, (std::vector<double>{0.0, 0.5, 0.5}));
  DivideRow(acc.data(), 3, 3.0, out.data());
  EXPECT_EQ(out, (std::vector<double>{1.0, 2.0, 3.0}));
  ScaleRow(x.data(), 3, 0.5);
  EXPECT_EQ(x, (std::vector<double>{0.5, 1.0, 2.0}));
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
