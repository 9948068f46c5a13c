// Implements CustomJsonTask.
#include "data/tasks/custom_json_task.h"

#include "absl/strings/str_cat.h"
#include "data/conversation/conversation_json.h"
#include "data/tasks/jsonl_file.h"

namespace gpt_sft::data {
namespace {

// Beyond ParseConversationJson's rules (which nanochat's render_conversation asserts): a
// training conversation has something to learn, a user and an assistant message after the
// optional system one (nanochat's CustomJSON: at least 2 messages).
absl::Status CheckTrainable(const Conversation& conv, const std::string& where) {
  const size_t system = !conv.messages.empty() && conv.messages[0].role == Role::kSystem ? 1 : 0;
  if (conv.messages.size() < system + 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": a conversation needs at least a user and an assistant message", system ? " after the system message" : "",
        ", got ", conv.messages.size(), " message(s)"));
  }
  return absl::OkStatus();
}

// The text an exact-match evaluation compares: a string, or the text parts joined.
std::string AnswerText(const Message& m) {
  if (!m.has_parts()) return m.text();
  std::string out;
  for (const Part& p : m.parts()) {
    if (p.kind == Part::Kind::kText) out += p.text;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CustomJsonTask>> CustomJsonTask::Load(const std::string& path) {
  std::unique_ptr<CustomJsonTask> task(new CustomJsonTask(path));
  absl::Status s = ForEachJsonlLine(path, [&](const std::string& line, const std::string& where) {
    absl::StatusOr<Conversation> conv = ParseConversationJson(line, where);
    if (!conv.ok()) return conv.status();
    if (absl::Status shape = CheckTrainable(*conv, where); !shape.ok()) return shape;
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
      ex.answer = AnswerText(*it);
      break;
    }
  }
  return ex;
}

}  // namespace gpt_sft::data
