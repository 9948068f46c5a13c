// Reads conversations from JSON: an array of {"role", "content"} messages, content a
// string or a list of {"type": "text"|"python"|"python_output", "text"} parts.
#ifndef GPT_SFT_DATA_CONVERSATION_CONVERSATION_JSON_H_
#define GPT_SFT_DATA_CONVERSATION_CONVERSATION_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "data/conversation/conversation.h"

namespace gpt_sft::data {

/// Parses one JSON array of messages. `where` (e.g. "chats.jsonl:12") prefixes every
/// error. Checks: valid JSON and UTF-8, known roles and part types, at least one
/// message, string contents, roles alternating user/assistant (an optional leading
/// system message), starting with user.
absl::StatusOr<Conversation> ParseConversationJson(const std::string& json, const std::string& where);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_CONVERSATION_CONVERSATION_JSON_H_
