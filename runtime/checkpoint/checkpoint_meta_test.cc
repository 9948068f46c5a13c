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
  const std::string json = *MetaToJson(Example());
  const size_t sum_at = json.find("    \"meta_checksum\": \"");
  ASSERT_NE(sum_at, std::string::npos) << json;
  const std::string sum_line = json.substr(sum_at, json.find('\n', sum_at) + 1 - sum_at);
  EXPECT_THAT(sum_line, ::testing::MatchesRegex("    \"meta_checksum\": \"[0-9a-f]{16}\"\n"));
  EXPECT_EQ(json.substr(0, sum_at) + json.substr(sum_at + sum_line.size()), R"({
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
    "format_version": 2,
    "model_file": "model_000650.safetensors",
    "dtype": "F32",
    "num_params": 7340032,
    "param_checksum": "0123456789abcdef",
)"
                                                                    R"(  }
}
)");
}

// Every single-bit flip anywhere in the file is refused (naming the file), or reads back the
// same meta (e.g. 'e' and 'E' in an exponent): nothing wrong is ever taken for the truth.
TEST(CheckpointMeta, EveryFlippedBitIsRefusedOrHarmless) {
  const std::string json = *MetaToJson(Example());
  const std::string expected = json;
  int refused = 0, harmless = 0;
  for (size_t i = 0; i < json.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = json;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      absl::StatusOr<CheckpointMeta> read = MetaFromJson("/ckpt/meta_000650.json", flipped);
      if (!read.ok()) {
        EXPECT_THAT(read.status().message(), HasSubstr("/ckpt/meta_000650.json"));
        ++refused;
        continue;
      }
      EXPECT_EQ(*MetaToJson(*read), expected) << "byte " << i << " bit " << bit << " was read as other content";
      ++harmless;
    }
  }
  EXPECT_GT(refused, 8 * int(json.size()) * 99 / 100) << harmless << " harmless flips";
}

TEST(CheckpointMeta, FormatOneWithoutAChecksumIsStillRead) {
  std::string json = *MetaToJson(Example());
  const size_t sum_at = json.find(",\n    \"meta_checksum\"");
  ASSERT_NE(sum_at, std::string::npos);
  json = json.substr(0, sum_at) + json.substr(json.find('\n', sum_at + 2));
  const size_t version_at = json.find("\"format_version\": 2");
  json[version_at + 18] = '1';
  absl::StatusOr<CheckpointMeta> read = MetaFromJson("meta.json", json);
  ASSERT_TRUE(read.ok()) << read.status() << json;
  EXPECT_EQ(read->param_checksum, 0x0123456789abcdefULL);
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
      {R"({"step": 1, )" + cfg + R"(, "gpt_sft": {"format_version": 3}})", "format_version 3"},
      {R"({"step": 1, )" + cfg + R"(, "gpt_sft": {"format_version": 2}})", "no gpt_sft.meta_checksum field"},
      {R"({"step": 1, )" + cfg + R"(, "gpt_sft": {"meta_checksum": "0000000000000000"}})", "does not match its checksum"},
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
