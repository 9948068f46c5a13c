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

TEST(CustomJsonTask, AcceptsASystemMessageAndAssistantParts) {
  const std::string path = WriteTemp(
      "parts.jsonl",
      "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"2+2?\"},"
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Let me compute. \"},"
      "{\"type\":\"python\",\"text\":\"2+2\"},{\"type\":\"python_output\",\"text\":\"4\"},"
      "{\"type\":\"text\",\"text\":\"It is 4.\"}]}]\n");
  auto task = CustomJsonTask::Load(path);
  ASSERT_TRUE(task.ok()) << task.status();
  ASSERT_EQ((*task)->size(), 1);
  Example ex = *(*task)->Get(0);
  ASSERT_EQ(ex.conversation.messages.size(), 3u);
  EXPECT_EQ(ex.conversation.messages[0].role, Role::kSystem);
  ASSERT_TRUE(ex.conversation.messages[2].has_parts());
  EXPECT_EQ(ex.conversation.messages[2].parts().size(), 4u);
  EXPECT_EQ(ex.conversation.messages[2].parts()[2].kind, Part::Kind::kPythonOutput);
  EXPECT_EQ(ex.answer, "Let me compute. It is 4.");  // the text parts
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
        BadJsonl{"short", "[{\"role\":\"user\",\"content\":\"x\"}]",
                 "a conversation needs at least a user and an assistant message, got 1 message(s)"},
        BadJsonl{"system_short", "[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":\"x\"}]",
                 "a conversation needs at least a user and an assistant message after the system message, got 2"},
        BadJsonl{"system_alone", "[{\"role\":\"system\",\"content\":\"s\"}]",
                 "messages[0]: a system message must be followed by a user message"},
        BadJsonl{"system_late",
                 "[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"system\",\"content\":\"s\"}]",
                 "messages[1]: role is system but assistant was expected"},
        BadJsonl{"user_parts",
                 "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]},"
                 "{\"role\":\"assistant\",\"content\":\"y\"}]",
                 "messages[0]: user content must be a string, not a list of parts"},
        BadJsonl{"no_role", "[{\"content\":\"x\"},{\"role\":\"assistant\",\"content\":\"y\"}]",
                 "messages[0] has no string \"role\""},
        BadJsonl{"part_no_text",
                 "[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\"}]}]",
                 "messages[1].content[0] needs a string \"type\" and a string \"text\""},
        BadJsonl{"object", "{\"role\":\"user\",\"content\":\"x\"}", "expected a JSON array of messages, got object"},
        BadJsonl{"order", "[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"user\",\"content\":\"y\"}]",
                 "messages[1]: role is user but assistant was expected"},
        BadJsonl{"content", "[{\"role\":\"user\",\"content\":1},{\"role\":\"assistant\",\"content\":\"y\"}]",
                 "messages[0] content must be a string or a list of parts, got number"},
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
