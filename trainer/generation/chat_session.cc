#include "trainer/generation/chat_session.h"

namespace gpt_sft::trainer {

using data::SpecialToken;

ChatSession::ChatSession(const data::Tokenizer& tok) : tok_(tok) { Clear(); }

void ChatSession::Clear() {
  tokens_ = {tok_.SpecialId(SpecialToken::kBos)};
  turns_ = 0;
  before_user_turn_ = 0;
}

const std::vector<int32_t>& ChatSession::UserTurn(std::string_view text) {
  before_user_turn_ = tokens_.size();
  tokens_.push_back(tok_.SpecialId(SpecialToken::kUserStart));
  tok_.EncodeAppend(text, &tokens_);
  tokens_.push_back(tok_.SpecialId(SpecialToken::kUserEnd));
  tokens_.push_back(tok_.SpecialId(SpecialToken::kAssistantStart));
  ++turns_;
  return tokens_;
}

void ChatSession::UndoUserTurn() {
  if (before_user_turn_ == 0 || before_user_turn_ > tokens_.size()) return;  // no turn to take back
  tokens_.resize(before_user_turn_);
  before_user_turn_ = 0;
  --turns_;
}

void ChatSession::AssistantTurn(absl::Span<const int32_t> reply) {
  tokens_.insert(tokens_.end(), reply.begin(), reply.end());
  tokens_.push_back(tok_.SpecialId(SpecialToken::kAssistantEnd));
}

}  // namespace gpt_sft::trainer
