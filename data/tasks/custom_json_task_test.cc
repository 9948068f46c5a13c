#include "data/tasks/custom_json_task.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "data/tasks/test_tasks.h"

namespace gpt_sft::data {
namespace {

using ::testing::HasSubstr;

TEST(CustomJsonTask, ReadsConversationsSkippingBlankLines) {
  auto task = CustomJsonTask::Load("data/testdata/identity.jsonl");  // 3 lines, the middle one blank
  ASSERT_TRUE(task.ok()) << task.status();
  ASSERT_EQ((*task)->size(), 2);
  Example first = *(*task)->Get(0);
  ASSERT_EQ(first.conversation.messages.size(), 2u);
  EXPECT_EQ(first.conversation.messages[0].role, Role::kUser);
  EXPECT_EQ(first.conversation.messages[0].text(), "Who are you?");
  EXPECT_EQ(first.answer, "I am a small chat model trained with gpt-sft.");
  Example second = *(*task)->Get(1);
  ASSERT_EQ(second.conversation.messages.size(), 4u);
  EXPECT_EQ(second.conversation.messages[0].text(), "¿Hablas español?");
  EXPECT_EQ(second.answer, "De nada.");
  EXPECT_EQ((*task)->Get(2).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ((*task)->name(), "CustomJSON(data/testdata/identity.jsonl)");
}

TEST(CustomJsonTask, AcceptsCrlfAndWhitespaceOnlyLines) {
  const std::string path = WriteTemp(
      "crlf.jsonl", "  \t\r\n[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":\"b\"}]\r\n");
  auto task = CustomJsonTask::Load(path);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->size(), 1);
}

TEST(CustomJsonTask, AnEmptyFileIsAnEmptyTask) {
  auto task = CustomJsonTask::Load(WriteTemp("empty.jsonl", ""));
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->size(), 0);
}

struct BadJsonl {
  std::string name, line, message;
};

class CustomJsonTaskErrors : public ::testing::TestWithParam<BadJsonl> {};

// Line 1 is good, line 2 blank, line 3 bad: the error must name line 3.
TEST_P(CustomJsonTaskErrors, NameTheFileAndLine) {
  const std::string path =
      WriteTemp(GetParam().name + ".jsonl",
                "[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"yo\"}]\n\n" +
                    GetParam().line + "\n");
  auto task = CustomJsonTask::Load(path);
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(task.status().message()), HasSubstr(path + ":3: " + GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    All, CustomJsonTaskErrors,
    ::testing::Values(
        BadJsonl{"malformed", "[{\"role\":", "malformed JSON"},
        BadJsonl{"role", "[{\"role\":\"bot\",\"content\":\"x\"}]", "messages[0] has unknown role \"bot\""},
        BadJsonl{"empty", "[]", "empty conversation"},
        BadJsonl{"short", "[{\"role\":\"user\",\"content\":\"x\"}]", "a conversation needs at least 2 messages, got 1"},
        BadJsonl{"order", "[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"user\",\"content\":\"y\"}]",
                 "messages[1]: role is user but assistant was expected"},
        BadJsonl{"content", "[{\"role\":\"user\",\"content\":1},{\"role\":\"assistant\",\"content\":\"y\"}]",
                 "messages[0] content must be a string or a list of parts, got number"},
        BadJsonl{"system",
                 "[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":\"x\"},"
                 "{\"role\":\"assistant\",\"content\":\"y\"}]",
                 "messages[0]: CustomJSON conversations start with user"},
        BadJsonl{"parts",
                 "[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
                 "\"text\":\"y\"}]}]",
                 "messages[1]: CustomJSON content must be a string"},
        BadJsonl{"part_type",
                 "[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"image\","
                 "\"text\":\"y\"}]}]",
                 "messages[1].content[0] has unknown part type \"image\""},
        BadJsonl{"utf8", "[{\"role\":\"user\",\"content\":\"\xc3\x28\"},{\"role\":\"assistant\",\"content\":\"y\"}]",
                 "not valid UTF-8 (byte 28 of the line)"},
        BadJsonl{"utf8_blank", "  \xff  ", "not valid UTF-8 (byte 3 of the line)"}),
    [](const auto& info) { return info.param.name; });

TEST(CustomJsonTask, MissingFileIsAnErrorUnlikeNanochat) {
  auto task = CustomJsonTask::Load("/nonexistent/chats.jsonl");
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(task.status().message(), HasSubstr("/nonexistent/chats.jsonl: cannot open"));
  // A directory is no JSONL file either (an ifstream would "open" it and read nothing).
  EXPECT_EQ(CustomJsonTask::Load(::testing::TempDir()).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gpt_sft::data
