// Implements CustomJsonTask.
#include "data/tasks/custom_json_task.h"

#include "absl/strings/str_cat.h"
#include "data/conversation/conversation_json.h"
#include "data/tasks/jsonl_file.h"

namespace gpt_sft::data {
namespace {

// What nanochat's CustomJSON asserts beyond ParseConversationJson's general rules.
absl::Status CheckNanochatShape(const Conversation& conv, const std::string& where) {
  if (conv.messages.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": a conversation needs at least 2 messages, got ",
                                                   conv.messages.size()));
  }
  for (size_t i = 0; i < conv.messages.size(); ++i) {
    const Message& m = conv.messages[i];
    if (m.role == Role::kSystem) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": messages[", i, "]: CustomJSON conversations start with user (no system message)"));
    }
    if (m.has_parts()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": messages[", i, "]: CustomJSON content must be a string, not a list of parts"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CustomJsonTask>> CustomJsonTask::Load(const std::string& path) {
  std::unique_ptr<CustomJsonTask> task(new CustomJsonTask(path));
  absl::Status s = ForEachJsonlLine(path, [&](const std::string& line, const std::string& where) {
    absl::StatusOr<Conversation> conv = ParseConversationJson(line, where);
    if (!conv.ok()) return conv.status();
    if (absl::Status shape = CheckNanochatShape(*conv, where); !shape.ok()) return shape;
    task->conversations_.push_back(*std::move(conv));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return task;
}

absl::StatusOr<Example> CustomJsonTask::GetExample(int64_t index) const {
  if (index < 0 || index >= num_examples()) {
    return absl::OutOfRangeError(absl::StrCat(name(), ": example ", index, " is outside [0, ", num_examples(), ")"));
  }
  Example ex;
  ex.conversation = conversations_[index];
  // The last assistant message (a conversation may end with a user turn).
  for (auto it = ex.conversation.messages.rbegin(); it != ex.conversation.messages.rend(); ++it) {
    if (it->role == Role::kAssistant) {
      ex.answer = it->text();
      break;
    }
  }
  return ex;
}

}  // namespace gpt_sft::data
