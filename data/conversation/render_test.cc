#include "data/conversation/render.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

// A byte-level tokenizer (no merges): every character is its own id, specials at 256+.
const Tokenizer& Bytes() {
  static const Tokenizer* tok = new Tokenizer(*Tokenizer::FromMerges(kSplitPattern, {}));
  return *tok;
}

constexpr int32_t kBos = 256, kUserStart = 257, kUserEnd = 258, kAsstStart = 259, kAsstEnd = 260,
                  kPyStart = 261, kPyEnd = 262, kOutStart = 263, kOutEnd = 264;

Message User(std::string s) { return {Role::kUser, std::move(s), {}}; }
Message Asst(std::string s) { return {Role::kAssistant, std::move(s), {}}; }

TEST(RenderConversation, MasksOnlyWhatTheAssistantSays) {
  RenderedConversation r = *RenderConversation({{User("hi"), Asst("yo")}}, Bytes());
  EXPECT_EQ(r.ids, (std::vector<int32_t>{kBos, kUserStart, 'h', 'i', kUserEnd, kAsstStart, 'y', 'o', kAsstEnd}));
  EXPECT_EQ(r.mask, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 1, 1, 1}));
}

TEST(RenderConversation, ToolCallsAreSupervisedAndToolOutputIsNot) {
  Message a{Role::kAssistant, "", {{Part::Kind::kText, "a"}, {Part::Kind::kPython, "1+1"},
                                   {Part::Kind::kPythonOutput, "2"}, {Part::Kind::kText, "b"}}};
  RenderedConversation r = *RenderConversation({{User("q"), a}}, Bytes());
  EXPECT_EQ(r.ids, (std::vector<int32_t>{kBos, kUserStart, 'q', kUserEnd, kAsstStart, 'a', kPyStart, '1', '+', '1',
                                         kPyEnd, kOutStart, '2', kOutEnd, 'b', kAsstEnd}));
  EXPECT_EQ(r.mask, (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1}));
}

TEST(RenderConversation, EachPartIsEncodedOnItsOwn) {
  // With the merge (a,b), "a"+"b" as two parts must stay two tokens.
  Tokenizer tok = *Tokenizer::FromMerges(kSplitPattern, {{'a', 'b'}});
  Message a{Role::kAssistant, "", {{Part::Kind::kText, "a"}, {Part::Kind::kText, "b"}}};
  RenderedConversation split = *RenderConversation({{User("ab"), a}}, tok);
  const int32_t ab = 256, user_start = tok.SpecialId(SpecialToken::kUserStart);
  EXPECT_EQ(split.ids[1], user_start);
  EXPECT_EQ(split.ids[2], ab);  // the user's "ab" is one token
  EXPECT_EQ(split.ids[5], 'a');
  EXPECT_EQ(split.ids[6], 'b');
}

TEST(RenderConversation, SystemMessageIsFoldedIntoTheFirstUserMessage) {
  Message sys{Role::kSystem, "S", {}};
  RenderedConversation r = *RenderConversation({{sys, User("u"), Asst("a")}}, Bytes());
  EXPECT_EQ(r.ids, (std::vector<int32_t>{kBos, kUserStart, 'S', '\n', '\n', 'u', kUserEnd, kAsstStart, 'a', kAsstEnd}));
}

TEST(RenderConversation, MultiTurn) {
  RenderedConversation r = *RenderConversation({{User("a"), Asst("b"), User("c"), Asst("d")}}, Bytes());
  EXPECT_EQ(r.mask, (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1}));
}

TEST(RenderConversation, TruncatesIdsAndMaskTogether) {
  RenderedConversation r = *RenderConversation({{User("hello"), Asst("world")}}, Bytes(), 6);
  EXPECT_EQ(r.ids, (std::vector<int32_t>{kBos, kUserStart, 'h', 'e', 'l', 'l'}));
  EXPECT_EQ(r.mask.size(), 6u);
}

TEST(RenderConversation, RejectsBadAlternation) {
  EXPECT_FALSE(RenderConversation({{Asst("x")}}, Bytes()).ok());
  EXPECT_FALSE(RenderConversation({{User("x"), User("y")}}, Bytes()).ok());
}

TEST(RenderForCompletion, DropsTheAnswerAndPrimesTheAssistant) {
  std::vector<int32_t> ids = *RenderForCompletion({{User("q"), Asst("A")}}, Bytes());
  EXPECT_EQ(ids, (std::vector<int32_t>{kBos, kUserStart, 'q', kUserEnd, kAsstStart}));
  EXPECT_FALSE(RenderForCompletion({{User("q")}}, Bytes()).ok());
}

}  // namespace
}  // namespace gpt_sft::data
