#include "model/model_config.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::compiler {
namespace {

using ::testing::HasSubstr;

TEST(ModelConfig, Depth20IsNanochatsD20) {
  ModelConfig c = *ModelConfig::FromDepth(20, 65536);
  EXPECT_EQ(c.n_embd, 1280);
  EXPECT_EQ(c.n_head, 10);
  EXPECT_EQ(c.n_kv_head, 10);
  EXPECT_EQ(c.head_dim(), 128);
  EXPECT_EQ(c.NumParams(), 560'988'160);
  EXPECT_EQ(c.FlopsPerToken(), 3'491'758'080);
}

TEST(ModelConfig, CpuBenchmarkConfigOverridesWidthAndHeads) {
  ModelConfig c = *ModelConfig::FromDepth(4, 8192, 2048, 256, 2);
  EXPECT_EQ(c.head_dim(), 128);
  EXPECT_EQ(c.NumParams(), 2 * 8192 * 256 + 4 * 12 * 256 * 256);
}

TEST(ModelConfig, SmallDepthsHaveOneHead) {
  ModelConfig c = *ModelConfig::FromDepth(2, 512, 64);
  EXPECT_EQ(c.n_embd, 128);
  EXPECT_EQ(c.n_head, 1);
}

TEST(ModelConfig, ErrorsNameTheFlag) {
  EXPECT_THAT(ModelConfig::FromDepth(0, 512).status().message(), HasSubstr("--depth=0"));
  EXPECT_THAT(ModelConfig::FromDepth(4, 512, 64, 250, 3).status().message(), HasSubstr("--n_head = 3"));
  EXPECT_THAT(ModelConfig::FromDepth(4, 512, 64, 256, 4, 3).status().message(), HasSubstr("--n_kv_head = 3"));
}

TEST(ModelConfig, JsonRoundTripInGptConfigOrder) {
  ModelConfig c = *ModelConfig::FromDepth(4, 8192, 2048, 256, 2);
  EXPECT_EQ(c.ToJson(),
            R"({"sequence_len":2048,"vocab_size":8192,"n_layer":4,"n_head":2,"n_kv_head":2,"n_embd":256})");
  EXPECT_EQ(*ModelConfig::FromJson(c.ToJson()), c);
  EXPECT_FALSE(ModelConfig::FromJson(R"({"n_layer":4})").ok());
}

TEST(ModelConfig, FromJsonChecksEachKey) {
  const std::string rest = R"("vocab_size":8192,"n_layer":4,"n_head":2,"n_kv_head":2,"n_embd":256)";
  // nanochat's HEAD adds keys of its own; they are not ours to check.
  EXPECT_TRUE(ModelConfig::FromJson(R"({"sequence_len":2048,"window_pattern":"L",)" + rest + "}").ok());
  EXPECT_THAT(ModelConfig::FromJson("{" + rest + "}").status().message(), HasSubstr("\"sequence_len\" is missing"));
  EXPECT_THAT(ModelConfig::FromJson(R"({"sequence_len":2048.5,)" + rest + "}").status().message(),
              HasSubstr("\"sequence_len\" = 2048.5 is not an int"));
  EXPECT_THAT(ModelConfig::FromJson(R"({"sequence_len":"2048",)" + rest + "}").status().message(),
              HasSubstr("is not an int"));
  EXPECT_THAT(ModelConfig::FromJson(R"({"sequence_len":4294967296,)" + rest + "}").status().message(),
              HasSubstr("is not an int"));
  EXPECT_THAT(ModelConfig::FromJson(R"({"sequence_len":-1,)" + rest + "}").status().message(),
              HasSubstr("must be positive"));
  EXPECT_THAT(ModelConfig::FromJson("[1]").status().message(), HasSubstr("not a JSON object"));
  EXPECT_THAT(ModelConfig::FromJson("{").status().message(), HasSubstr("not JSON"));
}

}  // namespace
}  // namespace gpt_sft::compiler
