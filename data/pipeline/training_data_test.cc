#include "data/pipeline/training_data.h"

#include <string>

#include "data/tasks/test_tasks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::HasSubstr;

constexpr char kChats[] = "data/testdata/chats.jsonl";    // 12 conversations
constexpr char kVal[] = "data/testdata/chats_val.jsonl";  // 4 conversations

TrainingDataOptions UserOnly() {
  TrainingDataOptions o;
  o.jsonl = {kChats};
  o.val_jsonl = {kVal};
  o.builtin_tasks = false;
  return o;
}

TEST(TrainingData, UserConversationsAloneWithHeldOutSet) {
  absl::StatusOr<TrainingData> data = BuildTrainingData(UserOnly());
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->train->size(), 12);
  ASSERT_EQ(data->train->tasks().size(), 1u);
  EXPECT_EQ(data->train->tasks()[0]->name(), std::string("CustomJSON(") + kChats + ")");
  EXPECT_EQ(data->val->size(), 4);
  EXPECT_EQ(data->val->tasks()[0]->name(), std::string("CustomJSON(") + kVal + ")");
  EXPECT_THAT(data->description, HasSubstr("Training data: 12 rows: CustomJSON(data/testdata/chats.jsonl) 12\n"));
  EXPECT_THAT(data->description, HasSubstr("Validation data: 4 rows: CustomJSON(data/testdata/chats_val.jsonl) 4 (--val_jsonl)"));
}

TEST(TrainingData, RepeatOversamplesTheUserFiles) {
  TrainingDataOptions o = UserOnly();
  o.jsonl_repeat = 3;
  absl::StatusOr<TrainingData> data = BuildTrainingData(o);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->train->size(), 36);
  EXPECT_THAT(data->description, HasSubstr("CustomJSON(data/testdata/chats.jsonl) 12 x3"));
  EXPECT_EQ(data->val->size(), 4);  // the held-out set is not repeated
}

TEST(TrainingData, MixedWithBuiltinTasksAndBuiltinValidationByDefault) {
  TrainingDataOptions o;
  o.jsonl = {kChats};
  o.words_path = "data/testdata/words.txt";
  o.examples_per_task = 10;
  absl::StatusOr<TrainingData> data = BuildTrainingData(o);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->train->size(), 3 * 10 + 12);
  EXPECT_EQ(data->train->tasks().back()->name(), std::string("CustomJSON(") + kChats + ")");
  // No --val_jsonl: the built-in tasks' held-out split, without the user's rows.
  EXPECT_EQ(data->val->size(), 3 * 10);
  EXPECT_THAT(data->description, HasSubstr("(the built-in tasks' held-out split: no --val_jsonl)"));
}

absl::Status Error(const TrainingDataOptions& o) { return BuildTrainingData(o).status(); }

TEST(TrainingData, FlagErrorsNameTheFlagAndFile) {
  TrainingDataOptions o = UserOnly();
  o.jsonl = {"/nonexistent/mine.jsonl"};
  EXPECT_THAT(ValidateTrainingDataFlags(o).message(), HasSubstr("--jsonl=/nonexistent/mine.jsonl: cannot open"));
  o = UserOnly();
  o.val_jsonl = {::testing::TempDir()};  // a directory
  EXPECT_THAT(Error(o).message(), HasSubstr("--val_jsonl=" + ::testing::TempDir() + ": cannot open"));
  o = UserOnly();
  o.val_jsonl = {"data/testdata/../testdata/chats.jsonl"};
  EXPECT_THAT(Error(o).message(), HasSubstr("is also a --jsonl file (data/testdata/chats.jsonl); a held-out set must not be trained on"));
  o = UserOnly();
  o.jsonl.clear();
  EXPECT_THAT(Error(o).message(), HasSubstr("--builtin_tasks=false and no --jsonl: nothing to train on"));
  o = UserOnly();
  o.jsonl_repeat = 0;
  EXPECT_THAT(Error(o).message(), HasSubstr("--jsonl_repeat=0 must be >= 1"));
}

TEST(TrainingData, FileErrorsNameTheFlagFileAndLine) {
  const std::string good = "[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":\"b\"}]\n";
  TrainingDataOptions o = UserOnly();
  o.jsonl = {WriteTemp("bad_json.jsonl", good + good + "[{\"role\":\n")};
  EXPECT_THAT(Error(o).message(), HasSubstr("--jsonl: " + o.jsonl[0] + ":3: malformed JSON"));
  o = UserOnly();
  o.val_jsonl = {WriteTemp("bad_role.jsonl", good + "[{\"role\":\"assistant\",\"content\":\"b\"}]\n")};
  EXPECT_THAT(Error(o).message(),
              HasSubstr("--val_jsonl: " + o.val_jsonl[0] + ":2: messages[0]: role is assistant but user was expected"));
  o = UserOnly();
  o.jsonl = {WriteTemp("blank.jsonl", "\n\n")};
  EXPECT_THAT(Error(o).message(), HasSubstr("blank.jsonl) has no conversations (only blank lines)"));
}

}  // namespace
}  // namespace gpt_sft::data
