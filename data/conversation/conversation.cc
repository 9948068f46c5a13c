// Implements ValidateConversation.
#include "data/conversation/conversation.h"

#include "absl/strings/str_cat.h"

namespace gpt_sft::data {

absl::Status ValidateConversation(const Conversation& conv) {
  const std::vector<Message>& m = conv.messages;
  if (m.empty()) return absl::InvalidArgumentError("empty conversation");
  // After an optional leading system message, even offsets are user and odd are assistant.
  const size_t first = m[0].role == Role::kSystem ? 1 : 0;
  if (first == 1 && m.size() == 1) {
    return absl::InvalidArgumentError("messages[0]: a system message must be followed by a user message");
  }
  for (size_t i = 0; i < m.size(); ++i) {
    const Role expected = i < first ? Role::kSystem : (i - first) % 2 == 0 ? Role::kUser : Role::kAssistant;
    if (m[i].role != expected) {
      return absl::InvalidArgumentError(absl::StrCat(
          "messages[", i, "]: role is ", RoleName(m[i].role), " but ", RoleName(expected),
          " was expected (roles alternate user, assistant, ... after an optional first system message)"));
    }
    if (m[i].role != Role::kAssistant && m[i].has_parts()) {
      return absl::InvalidArgumentError(
          absl::StrCat("messages[", i, "]: ", RoleName(m[i].role), " content must be a string, not a list of parts"));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::data
