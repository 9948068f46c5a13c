// A chat conversation as nanochat's tasks produce it: messages with a role and either a
// plain string or (assistant only, when rendered) a list of typed parts.
#ifndef GPT_SFT_DATA_CONVERSATION_CONVERSATION_H_
#define GPT_SFT_DATA_CONVERSATION_CONVERSATION_H_

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"

namespace gpt_sft::data {

enum class Role { kSystem, kUser, kAssistant };

/// "system", "user", "assistant": the JSON spelling.
inline const char* RoleName(Role r) {
  switch (r) {
    case Role::kSystem: return "system";
    case Role::kUser: return "user";
    case Role::kAssistant: return "assistant";
  }
  return "?";
}

/// One piece of an assistant message: prose, a python tool call, or the tool's output.
/// Rendering encodes every part on its own (BPE never spans two parts).
struct Part {
  enum class Kind { kText, kPython, kPythonOutput };
  Kind kind = Kind::kText;
  std::string text;
};

/// "text", "python", "python_output": the JSON spelling.
inline const char* PartKindName(Part::Kind k) {
  switch (k) {
    case Part::Kind::kText: return "text";
    case Part::Kind::kPython: return "python";
    case Part::Kind::kPythonOutput: return "python_output";
  }
  return "?";
}

/// A message holds either a string or a list of parts, never both: nanochat tells the two
/// apart by the JSON type of "content", and so do we (an empty part list is still a list).
struct Message {
  Role role = Role::kUser;
  std::variant<std::string, std::vector<Part>> content;

  static Message System(std::string text) { return {Role::kSystem, std::move(text)}; }
  static Message User(std::string text) { return {Role::kUser, std::move(text)}; }
  static Message Assistant(std::string text) { return {Role::kAssistant, std::move(text)}; }
  static Message Assistant(std::vector<Part> parts) { return {Role::kAssistant, std::move(parts)}; }

  bool has_parts() const { return std::holds_alternative<std::vector<Part>>(content); }
  /// The string content; precondition: !has_parts().
  const std::string& text() const { return std::get<std::string>(content); }
  /// The parts; precondition: has_parts().
  const std::vector<Part>& parts() const { return std::get<std::vector<Part>>(content); }
};

struct Conversation {
  std::vector<Message> messages;
};

/// nanochat's shape rules, checked before rendering: at least one message; an optional
/// system message first, then a user message; then roles alternating user, assistant,
/// user, ...; system and user content a string (only the assistant may have parts).
/// Errors are InvalidArgument and name the message index, e.g. "messages[2]: ...".
absl::Status ValidateConversation(const Conversation& conv);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_CONVERSATION_CONVERSATION_H_
