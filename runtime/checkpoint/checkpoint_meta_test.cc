#include "runtime/checkpoint/checkpoint_meta.h"

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::runtime {
namespace {

using ::testing::HasSubstr;

CheckpointMeta Example() {
  CheckpointMeta m;
  m.record.step = 650;
  m.record.val_loss = 1.25;
  m.record.metrics = {{"mmlu_acc", 0.5}, {"arc_easy_acc", 0.75}};
  m.model_config = *compiler::ModelConfig::FromDepth(4, 8192, 2048, 256, 2);
  m.model_file = "model_000650.safetensors";
  m.dtype = "F32";
  m.num_params = 7340032;
  m.param_checksum = 0x0123456789abcdefULL;
  return m;
}

TEST(CheckpointMeta, JsonHasNanochatsKeysInOrderThenOurs) {
  EXPECT_EQ(*MetaToJson(Example()), R"({
  "step": 650,
  "val_loss": 1.25,
  "mmlu_acc": 0.5,
  "arc_easy_acc": 0.75,
  "model_config": {
    "sequence_len": 2048,
    "vocab_size": 8192,
    "n_layer": 4,
    "n_head": 2,
    "n_kv_head": 2,
    "n_embd": 256
  },
  "gpt_sft": {
    "format_version": 1,
    "model_file": "model_000650.safetensors",
    "dtype": "F32",
    "num_params": 7340032,
    "param_checksum": "0123456789abcdef"
  }
}
)");
}

TEST(CheckpointMeta, RoundTrips) {
  CheckpointMeta m = *MetaFromJson("meta.json", *MetaToJson(Example()));
  EXPECT_EQ(m.record.step, 650);
  EXPECT_EQ(m.record.val_loss, 1.25);
  ASSERT_EQ(m.record.metrics.size(), 2u);
  EXPECT_EQ(m.record.metrics[0].first, "mmlu_acc");
  EXPECT_EQ(m.record.metrics[1].first, "arc_easy_acc");
  EXPECT_EQ(m.record.metrics[1].second, 0.75);
  EXPECT_EQ(m.model_config, Example().model_config);
  EXPECT_EQ(m.model_file, "model_000650.safetensors");
  EXPECT_EQ(m.num_params, 7340032);
  EXPECT_EQ(m.param_checksum, 0x0123456789abcdefULL);
}

TEST(CheckpointMeta, NonFiniteValLossIsNull) {
  CheckpointMeta m = Example();
  m.record.val_loss = std::nan("");
  EXPECT_THAT(*MetaToJson(m), HasSubstr("\"val_loss\": null"));
  m.record.val_loss.reset();
  EXPECT_FALSE(MetaFromJson("m", *MetaToJson(m))->record.val_loss.has_value());
}

TEST(CheckpointMeta, ReadsNanochatsOwnMeta) {
  // As chat_sft writes it at init, plus the non-numeric keys HEAD adds: no extras of ours.
  CheckpointMeta m = *MetaFromJson("meta_000650.json", R"({
    "step": 650, "val_loss": 1.0234, "mmlu_acc": 0.31, "arc_easy_acc": 0.42,
    "model_config": {"sequence_len": 2048, "vocab_size": 65536, "n_layer": 20, "n_head": 10,
                     "n_kv_head": 10, "n_embd": 1280, "window_pattern": "L"},
    "user_config": {"run": "dummy"}})");
  EXPECT_EQ(m.record.step, 650);
  EXPECT_EQ(m.model_config, *compiler::ModelConfig::FromDepth(20, 65536));
  ASSERT_EQ(m.record.metrics.size(), 2u);
  EXPECT_EQ(m.record.metrics[0].first, "mmlu_acc");
  EXPECT_FALSE(m.param_checksum.has_value());
  EXPECT_FALSE(m.model_file.has_value());
}

TEST(CheckpointMeta, BadMetricKeysAreRefused) {
  for (const char* key : {"", "step", "val_loss", "model_config", "gpt_sft"}) {
    CheckpointMeta m = Example();
    m.record.metrics.push_back({key, 1.0});
    EXPECT_FALSE(MetaToJson(m).ok()) << key;
  }
  CheckpointMeta m = Example();
  m.record.metrics.push_back({"mmlu_acc", 1.0});
  EXPECT_THAT(MetaToJson(m).status().message(), HasSubstr("\"mmlu_acc\""));
}

TEST(CheckpointMeta, BadFilesAreErrorsNamingTheFileAndKey) {
  const std::string cfg = R"("model_config": {"sequence_len": 64, "vocab_size": 512, "n_layer": 2, "n_head": 1, "n_kv_head": 1, "n_embd": 128})";
  const std::pair<std::string, std::string> cases[] = {
      {"{oops", "not JSON"},
      {"[]", "not a JSON object"},
      {"{" + cfg + "}", "\"step\" is missing"},
      {R"({"step": 1.5, )" + cfg + "}", "\"step\" is missing or not an integer"},
      {R"({"step": 1, "val_loss": "low", )" + cfg + "}", "\"val_loss\" is not a number"},
      {R"({"step": 1})", "\"model_config\" is missing"},
      {R"({"step": 1, "model_config": {"n_layer": 2}})", "model_config"},
      {R"({"step": 1, "model_config": {"sequence_len": 64, "vocab_size": 512, "n_layer": 2, "n_head": 3, "n_kv_head": 3, "n_embd": 128}})",
       "--n_head = 3"},
      {R"({"step": 1, )" + cfg + R"(, "gpt_sft": 3})", "\"gpt_sft\" is not an object"},
      {R"({"step": 1, )" + cfg + R"(, "gpt_sft": {"format_version": 2}})", "format_version 2"},
      {R"({"step": 1, )" + cfg + R"(, "gpt_sft": {"param_checksum": "xyz"}})", "param_checksum \"xyz\""},
      {R"({"step": 1, )" + cfg + R"(, "gpt_sft": {"num_params": "many"}})", "wrong type"},
  };
  for (const auto& [json, message] : cases) {
    absl::Status s = MetaFromJson("/ckpt/meta_000001.json", json).status();
    EXPECT_THAT(s.message(), HasSubstr("/ckpt/meta_000001.json")) << json;
    EXPECT_THAT(s.message(), HasSubstr(message)) << json;
  }
}

}  // namespace
}  // namespace gpt_sft::runtime
