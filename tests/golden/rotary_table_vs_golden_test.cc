// The rotary tables every path rotates by (model/rotary_table.h: the CPU kernels per
// token, the GPU artifact's constants) against rotary_table.gold, nanochat's own formula run in
// PyTorch (make_golden_rotary.py: inv_freq, angles and cos/sin in fp32, rounded to bf16) for
// head dim 128 at 32 positions up to 20479: bit for bit. The unrounded fp32 tables this project
// used before differ at almost every entry.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "model/rotary_table.h"
#include "gtest/gtest.h"
#include "tests/golden/golden_file.h"

namespace gpt_sft::tests {
namespace {

TEST(RotaryTableVsGolden, InverseFrequenciesAndEveryEntryAreBitIdentical) {
  absl::StatusOr<GoldenFile> g = GoldenFile::Load("tests/golden/rotary_table.gold");
  ASSERT_TRUE(g.ok()) << g.status();
  const nlohmann::json config = nlohmann::json::parse(g->config_json);
  const int64_t D = config.at("head_dim").get<int64_t>(), half = D / 2;
  const double base = config.at("rotary_base").get<double>();
  const std::vector<int32_t>& positions = g->tensors.at("positions").i32;
  const std::vector<float>& inv_freq = g->tensors.at("inv_freq").f32;
  const std::vector<float>& cos = g->tensors.at("cos").f32;
  const std::vector<float>& sin = g->tensors.at("sin").f32;
  ASSERT_EQ(int64_t(inv_freq.size()), half);
  ASSERT_EQ(cos.size(), positions.size() * half);
  ASSERT_EQ(sin.size(), positions.size() * half);
  EXPECT_GT(positions.back(), 20000) << "the golden reaches the far end of nanochat d20's table";

  for (int64_t j = 0; j < half; ++j) {
    EXPECT_EQ(compiler::RotaryInverseFrequency(j, D, base), inv_freq[j]) << "pair " << j;
  }
  int64_t differ = 0;
  for (size_t p = 0; p < positions.size(); ++p) {
    for (int64_t j = 0; j < half; ++j) {
      const compiler::RotaryCosSin ours = compiler::RotaryCosSinAt(positions[p], inv_freq[j]);
      const size_t i = p * half + j;
      differ += ours.cos != cos[i] || ours.sin != sin[i];
      EXPECT_EQ(ours.cos, cos[i]) << "cos at position " << positions[p] << ", pair " << j;
      EXPECT_EQ(ours.sin, sin[i]) << "sin at position " << positions[p] << ", pair " << j;
    }
  }
  EXPECT_EQ(differ, 0);
}

// The whole-table form the GPU lowering uses gives the same rows for positions 0 .. 15.
TEST(RotaryTableVsGolden, FilledTablesMatchTheGoldenRows) {
  absl::StatusOr<GoldenFile> g = GoldenFile::Load("tests/golden/rotary_table.gold");
  ASSERT_TRUE(g.ok()) << g.status();
  const nlohmann::json config = nlohmann::json::parse(g->config_json);
  const int64_t D = config.at("head_dim").get<int64_t>(), half = D / 2, rows = 16;
  const std::vector<int32_t>& positions = g->tensors.at("positions").i32;
  for (int64_t p = 0; p < rows; ++p) ASSERT_EQ(positions[p], p) << "the golden starts with positions 0 .. 15";
  std::vector<float> cos(rows * half), sin(rows * half);
  compiler::FillRotaryTables(rows, D, config.at("rotary_base").get<double>(), cos.data(), sin.data());
  const std::vector<float>& gold_cos = g->tensors.at("cos").f32;
  const std::vector<float>& gold_sin = g->tensors.at("sin").f32;
  EXPECT_EQ(cos, std::vector<float>(gold_cos.begin(), gold_cos.begin() + rows * half));
  EXPECT_EQ(sin, std::vector<float>(gold_sin.begin(), gold_sin.begin() + rows * half));
}

}  // namespace
}  // namespace gpt_sft::tests
