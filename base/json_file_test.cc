#include "base/json_file.h"

#include <string>

#include "base/test_dir.h"
#include "gtest/gtest.h"

namespace gpt_sft::base {
namespace {

TEST(ParseJson, KeepsKeysInTextOrder) {
  absl::StatusOr<Json> j = ParseJson(R"({"b": 1, "a": [2, 3]})", "t.json");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->dump(), R"({"b":1,"a":[2,3]})");
}

TEST(ParseJson, SortedKeysWhenAskedForNlohmannJson) {
  absl::StatusOr<nlohmann::json> j = ParseJson<nlohmann::json>(R"({"b": 1, "a": 2})", "t.json");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->dump(), R"({"a":2,"b":1})");
}

// The line and column are those of the byte where nlohmann stopped, 1-based.
TEST(ParseJson, SyntaxErrorNamesTheLineAndColumn) {
  struct Case {
    std::string text, message;
  } cases[] = {
      {"[1,\n 2,\n x]", "t.json:3:2: not JSON: syntax error while parsing value - invalid literal; last read: "
                        "'2,<U+000A> x'"},
      {"{\"a\": 1,\n}\n", "t.json:2:1: not JSON: syntax error while parsing object key - unexpected '}'; "
                          "expected string literal"},
      {"{", "t.json:1:2: not JSON: syntax error while parsing object key - unexpected end of input; "
            "expected string literal"},
      {"", "t.json:1:1: not JSON: syntax error while parsing value - unexpected end of input; expected '[', '{', "
           "or a literal"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Json> j = ParseJson(c.text, "t.json");
    EXPECT_EQ(j.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_EQ(j.status().message(), c.message) << c.text;
  }
}

TEST(ReadJsonFile, ReadsAndParses) {
  const std::string path = testing::FreshTestDir() + "/meta.json";
  testing::WriteBytes(path, "{\"step\": 650}\n");
  absl::StatusOr<Json> j = ReadJsonFile(path);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->at("step"), 650);
}

TEST(ReadJsonFile, MissingFileIsNotFound) {
  const std::string path = testing::FreshTestDir() + "/missing.json";
  EXPECT_EQ(ReadJsonFile(path).status().code(), absl::StatusCode::kNotFound);
}

// A file on disk that is not JSON is damaged: DataLoss, with the file, line and column.
TEST(ReadJsonFile, DamagedFileIsDataLossNamingThePosition) {
  const std::string path = testing::FreshTestDir() + "/meta.json";
  testing::WriteBytes(path, "{\n  \"step\": 650,\n  \"val_loss\": nan\n}\n");
  absl::StatusOr<Json> j = ReadJsonFile(path);
  EXPECT_EQ(j.status().code(), absl::StatusCode::kDataLoss);
  const std::string want = path + ":3:16: not JSON: ";  // nlohmann stops at the 'a' of nan
  EXPECT_EQ(j.status().message().substr(0, want.size()), want) << j.status();
}

}  // namespace
}  // namespace gpt_sft::base
