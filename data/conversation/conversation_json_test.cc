#include "data/conversation/conversation_json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::HasSubstr;

TEST(ParseConversationJson, ReadsStringsAndParts) {
  absl::StatusOr<Conversation> c = ParseConversationJson(
      R"([{"role":"system","content":"be brief"},{"role":"user","content":"2+2?"},
          {"role":"assistant","content":[{"type":"text","text":"Let me"},
           {"type":"python","text":"2+2"},{"type":"python_output","text":"4"}]}])",
      "f.jsonl:3");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->messages.size(), 3u);
  EXPECT_EQ(c->messages[0].role, Role::kSystem);
  EXPECT_EQ(c->messages[1].content, "2+2?");
  ASSERT_EQ(c->messages[2].parts.size(), 3u);
  EXPECT_EQ(c->messages[2].parts[1].kind, Part::Kind::kPython);
  EXPECT_EQ(c->messages[2].parts[2].text, "4");
}

struct Bad {
  const char* json;
  const char* message;
};

class ParseConversationJsonErrors : public ::testing::TestWithParam<Bad> {};

TEST_P(ParseConversationJsonErrors, NameWhereAndWhat) {
  absl::StatusOr<Conversation> c = ParseConversationJson(GetParam().json, "chats.jsonl:7");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("chats.jsonl:7: "));
  EXPECT_THAT(c.status().message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    All, ParseConversationJsonErrors,
    ::testing::Values(Bad{R"([{"role":"user","content":"hi"})", "malformed JSON"},
                      Bad{R"([])", "empty conversation"},
                      Bad{R"({"role":"user"})", "expected a JSON array"},
                      Bad{R"([{"role":"robot","content":"x"}])", "unknown role \"robot\""},
                      Bad{R"([{"role":"user","content":3}])", "content must be a string"},
                      Bad{R"([{"role":"assistant","content":"x"}])", "roles must alternate"},
                      Bad{R"([{"role":"user","content":"a"},{"role":"user","content":"b"}])", "roles must alternate"},
                      Bad{R"([{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"image","text":"x"}]}])",
                          "unknown part type \"image\""},
                      Bad{"[{\"role\":\"user\",\"content\":\"\xff\"}]", "malformed JSON"}));

}  // namespace
}  // namespace gpt_sft::data
