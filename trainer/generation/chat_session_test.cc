#include "trainer/generation/chat_session.h"

#include <string>
#include <vector>

#include "data/conversation/render.h"
#include "gtest/gtest.h"

namespace gpt_sft::trainer {
namespace {

const data::Tokenizer& Trained() {
  static const data::Tokenizer* tok = new data::Tokenizer(*data::Tokenizer::Train(
      {"hello world. hello there, world! the answer is 42.\n\nhello world\n\nwhat is six times seven"}, 300));
  return *tok;
}

// The session's prompt is nanochat's render_for_completion of the whole conversation so far,
// when each reply is the encoding of its text (data/conversation/render.h is the independent
// implementation of the chat format it is checked against).
TEST(ChatSessionTest, PromptsAreTheRenderedConversationSoFar) {
  const data::Tokenizer& tok = Trained();
  ChatSession session(tok);
  data::Conversation conv;
  conv.messages = {data::Message::User("hello world"), data::Message::Assistant("")};
  std::vector<int32_t> first = session.UserTurn("hello world");
  EXPECT_EQ(first, *data::RenderForCompletion(conv, tok));

  session.AssistantTurn(tok.Encode("the answer is 42."));
  conv.messages = {data::Message::User("hello world"), data::Message::Assistant("the answer is 42."),
                   data::Message::User("what is six times seven"), data::Message::Assistant("")};
  EXPECT_EQ(session.UserTurn("what is six times seven"), *data::RenderForCompletion(conv, tok));
  EXPECT_EQ(session.turns(), 2);
}

// A turn the model cannot take is taken back: the conversation is as before it.
TEST(ChatSessionTest, UndoUserTurnRestoresTheConversation) {
  const data::Tokenizer& tok = Trained();
  ChatSession session(tok);
  session.UserTurn("what is six times seven");
  session.AssistantTurn(tok.Encode("42."));
  const std::vector<int32_t> before = session.tokens();
  session.UserTurn("a turn far too long");
  session.UndoUserTurn();
  EXPECT_EQ(session.tokens(), before);
  EXPECT_EQ(session.turns(), 1);
  session.UndoUserTurn();  // nothing more to take back
  EXPECT_EQ(session.tokens(), before);
}

// A reply is kept as the tokens sampled, even where re-encoding its text would differ.
TEST(ChatSessionTest, KeepsTheSampledTokensOfAReply) {
  const data::Tokenizer& tok = Trained();
  ChatSession session(tok);
  session.UserTurn("hi");
  const std::vector<int32_t> bytes = {'h', 'e', 'l', 'l', 'o'};  // "hello" spelled byte by byte
  const size_t before = session.tokens().size();
  session.AssistantTurn(bytes);
  ASSERT_EQ(session.tokens().size(), before + bytes.size() + 1);
  EXPECT_EQ(std::vector<int32_t>(session.tokens().begin() + before, session.tokens().end() - 1), bytes);
  EXPECT_EQ(session.tokens().back(), tok.SpecialId(data::SpecialToken::kAssistantEnd));
}

TEST(ChatSessionTest, ClearStartsAnew) {
  const data::Tokenizer& tok = Trained();
  ChatSession session(tok);
  session.UserTurn("hello");
  session.AssistantTurn(tok.Encode("world"));
  session.Clear();
  EXPECT_EQ(session.turns(), 0);
  EXPECT_EQ(session.tokens(), std::vector<int32_t>{tok.SpecialId(data::SpecialToken::kBos)});
}

}  // namespace
}  // namespace gpt_sft::trainer
