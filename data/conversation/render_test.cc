#include "data/conversation/render.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::HasSubstr;

// A byte-level tokenizer (no merges): every byte is its own id, specials at 256..264.
const Tokenizer& Bytes() {
  static const Tokenizer* tok = new Tokenizer(*Tokenizer::FromMerges(kSplitPattern, {}));
  return *tok;
}

constexpr int32_t kBos = 256, kUserStart = 257, kUserEnd = 258, kAsstStart = 259, kAsstEnd = 260,
                  kPyStart = 261, kPyEnd = 262, kOutStart = 263, kOutEnd = 264;

// A tokenizer with real merges, trained on a tiny text whose words the tests reuse.
const Tokenizer& Trained() {
  static const Tokenizer* tok = new Tokenizer(*Tokenizer::Train(
      {"hello world. hello there, world! the answer is 42.\n\nhello world\n\n"
       "print(6*7) gives 42. hello hello world world the the answer answer"},
      300));
  return *tok;
}

// Expected (ids, mask), assembled piece by piece: Encode per text piece, SpecialId per special.
class Expect {
 public:
  explicit Expect(const Tokenizer& tok) : tok_(tok) {}
  Expect& S(SpecialToken t, uint8_t m) {
    r_.ids.push_back(tok_.SpecialId(t));
    r_.mask.push_back(m);
    return *this;
  }
  Expect& T(const std::string& text, uint8_t m) {
    for (int32_t id : tok_.Encode(text)) r_.ids.push_back(id), r_.mask.push_back(m);
    return *this;
  }
  const RenderedConversation& get() const { return r_; }

 private:
  const Tokenizer& tok_;
  RenderedConversation r_;
};

void ExpectSame(const RenderedConversation& got, const RenderedConversation& want) {
  ASSERT_EQ(got.ids.size(), got.mask.size());
  ASSERT_EQ(got.ids.size(), want.ids.size());
  for (size_t i = 0; i < want.ids.size(); ++i) {
    EXPECT_EQ(got.ids[i], want.ids[i]) << "token " << i;
    EXPECT_EQ(got.mask[i], want.mask[i]) << "mask of token " << i;
  }
}

Conversation Conv(std::vector<Message> m) { return {std::move(m)}; }

TEST(RenderConversation, MasksOnlyWhatTheAssistantSays) {
  RenderedConversation r = *RenderConversation(Conv({Message::User("hi"), Message::Assistant("yo")}), Bytes());
  EXPECT_EQ(r.ids, (std::vector<int32_t>{kBos, kUserStart, 'h', 'i', kUserEnd, kAsstStart, 'y', 'o', kAsstEnd}));
  EXPECT_EQ(r.mask, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 1, 1, 1}));
}

TEST(RenderConversation, ToolCallsAreSupervisedAndToolOutputIsNot) {
  Message a = Message::Assistant({{Part::Kind::kText, "a"},
                                  {Part::Kind::kPython, "1+1"},
                                  {Part::Kind::kPythonOutput, "2"},
                                  {Part::Kind::kText, "b"}});
  RenderedConversation r = *RenderConversation(Conv({Message::User("q"), a}), Bytes());
  EXPECT_EQ(r.ids, (std::vector<int32_t>{kBos, kUserStart, 'q', kUserEnd, kAsstStart, 'a', kPyStart, '1', '+', '1',
                                         kPyEnd, kOutStart, '2', kOutEnd, 'b', kAsstEnd}));
  EXPECT_EQ(r.mask, (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1}));
}

TEST(RenderConversation, EveryMessageKindWithATrainedTokenizer) {
  const Tokenizer& tok = Trained();
  // The pieces do merge, so the test would catch text encoded as a whole rather than per piece.
  ASSERT_LT(tok.Encode("hello world").size(), std::string("hello world").size());
  Conversation c = Conv({Message::System("the answer"),
                         Message::User("hello world"),
                         Message::Assistant("hello there, world!"),
                         Message::User("print(6*7)"),
                         Message::Assistant({{Part::Kind::kText, "hello "},
                                             {Part::Kind::kPython, "print(6*7)"},
                                             {Part::Kind::kPythonOutput, "42"},
                                             {Part::Kind::kText, "the answer is 42."}})});
  Expect want(tok);
  want.S(SpecialToken::kBos, 0)
      .S(SpecialToken::kUserStart, 0).T("the answer\n\nhello world", 0).S(SpecialToken::kUserEnd, 0)
      .S(SpecialToken::kAssistantStart, 0).T("hello there, world!", 1).S(SpecialToken::kAssistantEnd, 1)
      .S(SpecialToken::kUserStart, 0).T("print(6*7)", 0).S(SpecialToken::kUserEnd, 0)
      .S(SpecialToken::kAssistantStart, 0)
      .T("hello ", 1)
      .S(SpecialToken::kPythonStart, 1).T("print(6*7)", 1).S(SpecialToken::kPythonEnd, 1)
      .S(SpecialToken::kOutputStart, 0).T("42", 0).S(SpecialToken::kOutputEnd, 0)
      .T("the answer is 42.", 1)
      .S(SpecialToken::kAssistantEnd, 1);
  ExpectSame(*RenderConversation(c, tok), want.get());
}

TEST(RenderConversation, EachPartIsEncodedOnItsOwn) {
  // With the one merge (a,b) -> 256, "ab" as one string is one token but as two parts two.
  Tokenizer tok = *Tokenizer::FromMerges(kSplitPattern, {{'a', 'b'}});
  const int32_t ab = 256;
  auto render = [&](Message a) { return RenderConversation(Conv({Message::User("ab"), std::move(a)}), tok)->ids; };
  std::vector<int32_t> prefix = {tok.SpecialId(SpecialToken::kBos), tok.SpecialId(SpecialToken::kUserStart), ab,
                                 tok.SpecialId(SpecialToken::kUserEnd),
                                 tok.SpecialId(SpecialToken::kAssistantStart)};
  std::vector<int32_t> whole = prefix, split = prefix;
  whole.insert(whole.end(), {ab, tok.SpecialId(SpecialToken::kAssistantEnd)});
  split.insert(split.end(), {'a', 'b', tok.SpecialId(SpecialToken::kAssistantEnd)});
  EXPECT_EQ(render(Message::Assistant("ab")), whole);
  EXPECT_EQ(render(Message::Assistant({{Part::Kind::kText, "ab"}})), whole);
  EXPECT_EQ(render(Message::Assistant({{Part::Kind::kText, "a"}, {Part::Kind::kText, "b"}})), split);
}

TEST(RenderConversation, SystemMessageIsFoldedIntoTheFirstUserMessage) {
  RenderedConversation r =
      *RenderConversation(Conv({Message::System("S"), Message::User("u"), Message::Assistant("a")}), Bytes());
  EXPECT_EQ(r.ids, (std::vector<int32_t>{kBos, kUserStart, 'S', '\n', '\n', 'u', kUserEnd, kAsstStart, 'a', kAsstEnd}));
  EXPECT_EQ(r.mask, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1}));
  // Encoded as one string: the same as a user message that says it all, merges included.
  const Tokenizer& tok = Trained();
  RenderedConversation folded = *RenderConversation(
      Conv({Message::System("hello world"), Message::User("the answer"), Message::Assistant("42")}), tok);
  RenderedConversation plain =
      *RenderConversation(Conv({Message::User("hello world\n\nthe answer"), Message::Assistant("42")}), tok);
  ExpectSame(folded, plain);
}

TEST(RenderConversation, EmptyPartListAndEmptyStringRenderAlike) {
  RenderedConversation parts = *RenderConversation(Conv({Message::User("q"), Message::Assistant(std::vector<Part>{})}), Bytes());
  RenderedConversation text = *RenderConversation(Conv({Message::User("q"), Message::Assistant("")}), Bytes());
  EXPECT_EQ(parts.ids, (std::vector<int32_t>{kBos, kUserStart, 'q', kUserEnd, kAsstStart, kAsstEnd}));
  EXPECT_EQ(parts.ids, text.ids);
  EXPECT_EQ(parts.mask, text.mask);
}

TEST(RenderConversation, MultiTurnAndAConversationEndingInAUserMessage) {
  Conversation c = Conv({Message::User("a"), Message::Assistant("b"), Message::User("c"), Message::Assistant("d")});
  EXPECT_EQ(RenderConversation(c, Bytes())->mask, (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1}));
  c.messages.pop_back();
  EXPECT_EQ(RenderConversation(c, Bytes())->ids,
            (std::vector<int32_t>{kBos, kUserStart, 'a', kUserEnd, kAsstStart, 'b', kAsstEnd, kUserStart, 'c', kUserEnd}));
}

TEST(RenderConversation, TruncatesIdsAndMaskTogether) {
  Conversation c = Conv({Message::User("hello"), Message::Assistant("world")});
  RenderedConversation r = *RenderConversation(c, Bytes(), 10);
  EXPECT_EQ(r.ids, (std::vector<int32_t>{kBos, kUserStart, 'h', 'e', 'l', 'l', 'o', kUserEnd, kAsstStart, 'w'}));
  EXPECT_EQ(r.mask, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(RenderConversation(c, Bytes(), 1)->ids, (std::vector<int32_t>{kBos}));
  // Full length is 15 tokens: a limit of 15 or more leaves it whole.
  EXPECT_EQ(RenderConversation(c, Bytes(), 15)->ids.size(), 15u);
  EXPECT_EQ(RenderConversation(c, Bytes())->ids.size(), 15u);
  EXPECT_THAT(RenderConversation(c, Bytes(), 0).status().message(), HasSubstr("max_tokens must be >= 1"));
}

TEST(RenderConversation, DefaultLimitIs2048) {
  Conversation c = Conv({Message::User(std::string(3000, 'x')), Message::Assistant("y")});
  RenderedConversation r = *RenderConversation(c, Bytes());
  EXPECT_EQ(r.ids.size(), 2048u);
  EXPECT_EQ(r.mask.size(), 2048u);
}

struct BadConversation {
  const char* name;
  Conversation conv;
  const char* message;
};

class RenderConversationErrors : public ::testing::TestWithParam<BadConversation> {};

TEST_P(RenderConversationErrors, SayWhatIsWrong) {
  absl::StatusOr<RenderedConversation> r = RenderConversation(GetParam().conv, Bytes());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    All, RenderConversationErrors,
    ::testing::Values(
        BadConversation{"empty", {}, "empty conversation"},
        BadConversation{"assistant_first", Conv({Message::Assistant("x")}),
                        "messages[0]: role is assistant but user was expected"},
        BadConversation{"two_users", Conv({Message::User("x"), Message::User("y")}),
                        "messages[1]: role is user but assistant was expected"},
        BadConversation{"lone_system", Conv({Message::System("s")}), "must be followed by a user message"},
        BadConversation{"system_then_assistant", Conv({Message::System("s"), Message::Assistant("a")}),
                        "messages[1]: role is assistant but user was expected"},
        BadConversation{"late_system", Conv({Message::User("u"), Message::System("s")}),
                        "messages[1]: role is system but assistant was expected"},
        BadConversation{"user_parts", Conv({Message{Role::kUser, std::vector<Part>{{Part::Kind::kText, "x"}}}}),
                        "messages[0]: user content must be a string"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(RenderForCompletion, DropsTheAnswerAndPrimesTheAssistant) {
  std::vector<int32_t> ids = *RenderForCompletion(Conv({Message::User("q"), Message::Assistant("A")}), Bytes());
  EXPECT_EQ(ids, (std::vector<int32_t>{kBos, kUserStart, 'q', kUserEnd, kAsstStart}));
  // Earlier turns stay, with the system message folded in.
  ids = *RenderForCompletion(Conv({Message::System("s"), Message::User("a"), Message::Assistant("b"),
                                   Message::User("c"), Message::Assistant("d")}),
                             Bytes());
  EXPECT_EQ(ids, (std::vector<int32_t>{kBos, kUserStart, 's', '\n', '\n', 'a', kUserEnd, kAsstStart, 'b', kAsstEnd,
                                       kUserStart, 'c', kUserEnd, kAsstStart}));
}

TEST(RenderForCompletion, TruncatesThenAppendsAssistantStart) {
  Conversation c = Conv({Message::User("hello"), Message::Assistant("A")});
  EXPECT_EQ(*RenderForCompletion(c, Bytes(), 3), (std::vector<int32_t>{kBos, kUserStart, 'h', kAsstStart}));
  Conversation long_prompt = Conv({Message::User(std::string(3000, 'x')), Message::Assistant("A")});
  std::vector<int32_t> ids = *RenderForCompletion(long_prompt, Bytes());
  EXPECT_EQ(ids.size(), 2049u);
  EXPECT_EQ(ids.back(), kAsstStart);
}

TEST(RenderForCompletion, NeedsAFinalAssistantMessage) {
  EXPECT_THAT(RenderForCompletion(Conv({Message::User("q")}), Bytes()).status().message(),
              HasSubstr("ending in an assistant message"));
  EXPECT_THAT(RenderForCompletion(Conv({Message::User("q"), Message::Assistant("a"), Message::User("r")}), Bytes())
                  .status()
                  .message(),
              HasSubstr("ending in an assistant message"));
  EXPECT_FALSE(RenderForCompletion(Conv({Message::User("q"), Message::User("a"), Message::Assistant("r")}), Bytes()).ok());
}

}  // namespace
}  // namespace gpt_sft::data
