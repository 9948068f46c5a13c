#include "model/param_layout.h"

#include "gtest/gtest.h"

namespace gpt_sft::compiler {
namespace {

TEST(ParamLayout, D20MatchesNanochatStateDict) {
  const ModelConfig config = *ModelConfig::FromDepth(20, 65536);
  const std::vector<ParamSpec> layout = ParamLayout(config);
  ASSERT_EQ(layout.size(), 2u + 6u * 20u);
  EXPECT_EQ(layout.front().name, "transformer.wte.weight");
  EXPECT_EQ(layout.front().shape, (std::vector<int64_t>{65536, 1280}));
  EXPECT_EQ(layout[5].name, "transformer.h.0.mlp.c_fc.weight");
  EXPECT_EQ(layout[5].shape, (std::vector<int64_t>{5120, 1280}));
  EXPECT_EQ(layout[6].shape, (std::vector<int64_t>{1280, 5120}));
  EXPECT_EQ(layout.back().name, "lm_head.weight");
  EXPECT_EQ(layout.back().group, ParamGroup::kUnembedding);
  int64_t total = 0;
  for (const ParamSpec& p : layout) total += p.numel();
  EXPECT_EQ(total, 560988160);
  EXPECT_EQ(total, config.NumParams());
}

TEST(ParamLayout, GroupedQueryAttentionNarrowsKeyAndValue) {
  const ModelConfig config = *ModelConfig::FromDepth(4, 512, 64, 256, 2, 1);
  const std::vector<ParamSpec> layout = ParamLayout(config);
  EXPECT_EQ(layout[2].name, "transformer.h.0.attn.c_k.weight");
  EXPECT_EQ(layout[2].shape, (std::vector<int64_t>{128, 256}));
  EXPECT_EQ(layout[1].shape, (std::vector<int64_t>{256, 256}));
}

}  // namespace
}  // namespace gpt_sft::compiler
