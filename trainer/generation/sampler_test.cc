// Sampler: argmax at temperature 0 (first index on ties), top_k = 1 is the argmax at any
// temperature, only the top k can be drawn, frequencies follow softmax(logits / T), and a
// seed fixes the draws.
#include "trainer/generation/sampler.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::trainer {
namespace {

TEST(Sampler, TemperatureZeroIsTheArgmaxWithTheFirstIndexOnTies) {
  Sampler sampler({0.0, 0, 1});
  EXPECT_EQ(sampler.Next(std::vector<float>{0.5f, 2.0f, 2.0f, -1.0f}), 1);
  EXPECT_EQ(Argmax(std::vector<float>{-3.0f}), 0);
}

TEST(Sampler, TopOneIsTheArgmaxAtAnyTemperature) {
  Sampler sampler({5.0, 1, 9});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(sampler.Next(std::vector<float>{0.1f, 0.3f, 0.2f}), 1);
}

TEST(Sampler, OnlyTheTopKAreDrawnWithSoftmaxFrequencies) {
  const std::vector<float> logits = {1.0f, 3.0f, 0.0f, 2.0f, -5.0f};
  Sampler sampler({1.0, 2, 3});
  std::vector<int> counts(5, 0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++counts[sampler.Next(logits)];
  EXPECT_EQ(counts[0] + counts[2] + counts[4], 0);
  const double p1 = 1.0 / (1.0 + std::exp(-1.0));  // softmax over {3, 2}
  EXPECT_NEAR(counts[1] / double(n), p1, 0.02);
}

TEST(Sampler, ASeedFixesTheDraws) {
  const std::vector<float> logits(50, 0.0f);
  Sampler a({1.0, 0, 42}), b({1.0, 0, 42}), c({1.0, 0, 43});
  std::vector<int32_t> da, db, dc;
  for (int i = 0; i < 30; ++i) {
    da.push_back(a.Next(logits));
    db.push_back(b.Next(logits));
    dc.push_back(c.Next(logits));
  }
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
}

TEST(Sampler, ValidateNamesTheFlag) {
  EXPECT_NE(std::string(SamplingOptions{-0.5, 0, 1}.Validate().message()).find("--temperature"), std::string::npos);
  EXPECT_NE(std::string(SamplingOptions{1.0, -2, 1}.Validate().message()).find("--top_k"), std::string::npos);
  EXPECT_TRUE((SamplingOptions{0.7, 50, 1}.Validate().ok()));
}

}  // namespace
}  // namespace gpt_sft::trainer
