// ChatSession: the token history of a multi-turn chat, as nanochat's chat_cli keeps it: the
// conversation so far in chat format, each user turn appended as
// <|user_start|> text <|user_end|> <|assistant_start|>, each reply as the sampled tokens
// themselves (not re-encoded from its text, which could tokenize differently) and
// <|assistant_end|>. So the model always sees exactly what it wrote.
//
//   ChatSession session(tok);
//   std::vector<int32_t> prompt = session.UserTurn("Hi");   // the whole conversation so far
//   session.AssistantTurn(reply_ids);                        // then the next UserTurn
#ifndef GPT_SFT_TRAINER_GENERATION_CHAT_SESSION_H_
#define GPT_SFT_TRAINER_GENERATION_CHAT_SESSION_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "data/tokenizer/tokenizer.h"

namespace gpt_sft::trainer {

class ChatSession {
 public:
  /// `tok` must outlive the session.
  explicit ChatSession(const data::Tokenizer& tok);

  /// Appends the user's turn and <|assistant_start|>; returns every token so far (the prompt
  /// to complete).
  const std::vector<int32_t>& UserTurn(std::string_view text);
  /// Takes back the last UserTurn (a turn the model could not take: too long), so the
  /// conversation goes on from where it was.
  void UndoUserTurn();
  /// Appends the reply (its tokens as sampled, without the stop token) and <|assistant_end|>.
  void AssistantTurn(absl::Span<const int32_t> reply);
  /// Forgets every turn (nanochat's 'clear').
  void Clear();

  const std::vector<int32_t>& tokens() const { return tokens_; }
  int turns() const { return turns_; }

 private:
  const data::Tokenizer& tok_;
  std::vector<int32_t> tokens_;
  int turns_ = 0;
  size_t before_user_turn_ = 0;  // tokens_.size() before the last UserTurn
};

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_GENERATION_CHAT_SESSION_H_
