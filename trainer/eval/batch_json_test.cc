#include "trainer/eval/batch_json.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace gpt_sft::trainer {
namespace {

constexpr char kLine[] =
    R"({"batch":0,"inputs_shape":[2,3],"targets_shape":[2,3],"inputs":[[1,2,3],[4,5,6]],)"
    R"("targets":[[2,3,-1],[-1,6,-1]],"segment_ids":[[0,0,0],[0,0,1]],"positions":[[0,1,2],[0,1,0]],)"
    R"("supervised_tokens":3})";

std::string WriteTemp(const std::string& name, const std::string& contents) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / name).string();
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(BatchFromJson, ReadsDumpBatchLine) {
  absl::StatusOr<data::Batch> b = BatchFromJson("f:1", kLine);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->B, 2);
  EXPECT_EQ(b->T, 3);
  EXPECT_EQ(b->inputs, (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(b->targets, (std::vector<int32_t>{2, 3, -1, -1, 6, -1}));
  EXPECT_EQ(b->segment_ids, (std::vector<int32_t>{0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(b->positions, (std::vector<int32_t>{0, 1, 2, 0, 1, 0}));
  EXPECT_EQ(b->supervised_tokens, 3);
}

TEST(BatchFromJson, ErrorsNameWhereAndKey) {
  std::string missing = kLine;
  missing.replace(missing.find("\"targets\":"), 10, "\"targetz\":");
  absl::StatusOr<data::Batch> b = BatchFromJson("f.json:4", missing);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("f.json:4: no \"targets\""), absl::string_view::npos) << b.status();

  std::string short_row = kLine;
  short_row.replace(short_row.find("[[1,2,3]"), 8, "[[1,2]");
  b = BatchFromJson("f.json:2", short_row);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("\"inputs\" row 0 must hold 3"), absl::string_view::npos) << b.status();

  b = BatchFromJson("f.json:1", "{\"inputs\": [");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("f.json:1: not a JSON object"), absl::string_view::npos) << b.status();

  std::string bad_positions = kLine;  // positions must restart at 0 in each segment
  bad_positions.replace(bad_positions.find("[0,1,0]]"), 8, "[0,1,2]]");
  b = BatchFromJson("f.json:9", bad_positions);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("f.json:9"), absl::string_view::npos) << b.status();
}

TEST(ReadBatchesJson, LinesInOrderBlankSkipped) {
  const std::string path = WriteTemp("two.json", std::string(kLine) + "\n\n" + kLine + "\n");
  absl::StatusOr<std::vector<data::Batch>> batches = ReadBatchesJson(path);
  ASSERT_TRUE(batches.ok()) << batches.status();
  EXPECT_EQ(batches->size(), 2u);
}

TEST(ReadBatchesJson, MissingEmptyAndBadLineNameTheFile) {
  absl::StatusOr<std::vector<data::Batch>> b = ReadBatchesJson("/nonexistent/x.json");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("/nonexistent/x.json"), absl::string_view::npos);
  const std::string empty = WriteTemp("empty.json", "\n");
  b = ReadBatchesJson(empty);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("holds no batch"), absl::string_view::npos);
  const std::string bad = WriteTemp("bad.json", std::string(kLine) + "\n[1,2]\n");
  b = ReadBatchesJson(bad);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("bad.json:2"), absl::string_view::npos) << b.status();
}

}  // namespace
}  // namespace gpt_sft::trainer
