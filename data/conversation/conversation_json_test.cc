#include "data/conversation/conversation_json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ParseConversationJson, ReadsStringsAndParts) {
  absl::StatusOr<Conversation> c = ParseConversationJson(
      R"([{"role":"system","content":"be brief"},{"role":"user","content":"2+2?","extra":1},
          {"role":"assistant","content":[{"type":"text","text":"Let me"},
           {"type":"python","text":"2+2"},{"type":"python_output","text":"4"}]}])",
      "f.jsonl:3");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->messages.size(), 3u);
  EXPECT_EQ(c->messages[0].role, Role::kSystem);
  EXPECT_EQ(c->messages[0].text(), "be brief");
  EXPECT_EQ(c->messages[1].role, Role::kUser);
  EXPECT_EQ(c->messages[1].text(), "2+2?");
  EXPECT_EQ(c->messages[2].role, Role::kAssistant);
  ASSERT_TRUE(c->messages[2].has_parts());
  const std::vector<Part>& parts = c->messages[2].parts();
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].kind, Part::Kind::kText);
  EXPECT_EQ(parts[0].text, "Let me");
  EXPECT_EQ(parts[1].kind, Part::Kind::kPython);
  EXPECT_EQ(parts[1].text, "2+2");
  EXPECT_EQ(parts[2].kind, Part::Kind::kPythonOutput);
  EXPECT_EQ(parts[2].text, "4");
}

TEST(ParseConversationJson, KeepsAnEmptyPartListAsAList) {
  absl::StatusOr<Conversation> c =
      ParseConversationJson(R"([{"role":"user","content":""},{"role":"assistant","content":[]}])", "x");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->messages[0].has_parts());
  EXPECT_TRUE(c->messages[1].has_parts());
  EXPECT_TRUE(c->messages[1].parts().empty());
}

TEST(ParseConversationJson, KeepsUnicodeAndEscapes) {
  absl::StatusOr<Conversation> c = ParseConversationJson(
      R"([{"role":"user","content":"caf\u00e9 \"q\"\n"},{"role":"assistant","content":"日本"}])", "x");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->messages[0].text(), "caf\xc3\xa9 \"q\"\n");
  EXPECT_EQ(c->messages[1].text(), "日本");
}

struct Bad {
  const char* name;
  const char* json;
  const char* message;
};

class ParseConversationJsonErrors : public ::testing::TestWithParam<Bad> {};

TEST_P(ParseConversationJsonErrors, NameWhereAndWhat) {
  absl::StatusOr<Conversation> c = ParseConversationJson(GetParam().json, "chats.jsonl:7");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(c.status().message()), StartsWith("chats.jsonl:7: "));
  EXPECT_THAT(c.status().message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    All, ParseConversationJsonErrors,
    ::testing::Values(
        Bad{"truncated", R"([{"role":"user","content":"hi"})", "malformed JSON"},
        Bad{"trailing", R"([{"role":"user","content":"hi"}] x)", "malformed JSON"},
        Bad{"not_utf8", "[{\"role\":\"user\",\"content\":\"\xff\"}]", "malformed JSON"},
        Bad{"empty", R"([])", "empty conversation"},
        Bad{"object", R"({"role":"user"})", "expected a JSON array of messages, got object"},
        Bad{"message_not_object", R"(["hi"])", "messages[0] must be an object, got string"},
        Bad{"no_role", R"([{"content":"x"}])", "messages[0] has no string \"role\""},
        Bad{"unknown_role", R"([{"role":"robot","content":"x"}])", "messages[0] has unknown role \"robot\""},
        Bad{"number_content", R"([{"role":"user","content":3}])",
            "messages[0] content must be a string or a list of parts, got number"},
        Bad{"null_content", R"([{"role":"user","content":null}])", "got null"},
        Bad{"no_content", R"([{"role":"user"}])", "got nothing"},
        Bad{"user_parts", R"([{"role":"user","content":[{"type":"text","text":"x"}]}])",
            "messages[0]: user content must be a string"},
        Bad{"assistant_first", R"([{"role":"assistant","content":"x"}])",
            "messages[0]: role is assistant but user was expected"},
        Bad{"two_users", R"([{"role":"user","content":"a"},{"role":"user","content":"b"}])",
            "messages[1]: role is user but assistant was expected"},
        Bad{"lone_system", R"([{"role":"system","content":"s"}])", "must be followed by a user message"},
        Bad{"part_not_object", R"([{"role":"user","content":"a"},{"role":"assistant","content":["x"]}])",
            "messages[1].content[0] must be an object"},
        Bad{"part_no_text", R"([{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"text"}]}])",
            "messages[1].content[0] needs a string \"type\" and a string \"text\""},
        Bad{"unknown_part",
            R"([{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"text","text":""},{"type":"image","text":"x"}]}])",
            "messages[1].content[1] has unknown part type \"image\""}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gpt_sft::data
