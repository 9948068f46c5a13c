// A chat conversation as nanochat's tasks produce it: messages with a role and either a
// plain string or (assistant only) a list of typed parts.
#ifndef GPT_SFT_DATA_CONVERSATION_CONVERSATION_H_
#define GPT_SFT_DATA_CONVERSATION_CONVERSATION_H_

#include <string>
#include <vector>

namespace gpt_sft::data {

enum class Role { kSystem, kUser, kAssistant };

/// One piece of an assistant message: prose, a python tool call, or the tool's output.
struct Part {
  enum class Kind { kText, kPython, kPythonOutput };
  Kind kind = Kind::kText;
  std::string text;
};

struct Message {
  Role role = Role::kUser;
  std::string content;      // used when `parts` is empty
  std::vector<Part> parts;  // assistant messages only; when set, `content` is unused
};

struct Conversation {
  std::vector<Message> messages;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_CONVERSATION_CONVERSATION_H_
