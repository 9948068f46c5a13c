// Reads conversations from JSON: an array of {"role", "content"} messages, content a
// string or a list of {"type": "text"|"python"|"python_output", "text"} parts.
#ifndef GPT_SFT_DATA_CONVERSATION_CONVERSATION_JSON_H_
#define GPT_SFT_DATA_CONVERSATION_CONVERSATION_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "data/conversation/conversation.h"

namespace gpt_sft::data {

/// Parses one JSON array of messages, e.g.
///   [{"role": "user", "content": "2+2?"},
///    {"role": "assistant", "content": [{"type": "python", "text": "2+2"},
///                                      {"type": "python_output", "text": "4"}]}]
/// `where` (e.g. "chats.jsonl:12") begins every error message, as "chats.jsonl:12: ...".
/// Errors (InvalidArgument): malformed JSON (invalid UTF-8 included), not an array, an
/// empty array, a message that is not an object, a missing or unknown role, content
/// missing or neither a string nor a list of parts, a part without string "type" and
/// "text" or of an unknown type, and whatever ValidateConversation rejects (roles out of
/// order, parts in a user or system message). Keys other than role/content are ignored.
absl::StatusOr<Conversation> ParseConversationJson(const std::string& json, const std::string& where);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_CONVERSATION_CONVERSATION_JSON_H_
