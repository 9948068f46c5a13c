// Implements CustomJsonTask.
#include "data/tasks/custom_json_task.h"

#include "absl/strings/str_cat.h"
#include "data/conversation/conversation_json.h"
#include "data/tasks/jsonl_file.h"

namespace gpt_sft::data {

absl::StatusOr<std::unique_ptr<CustomJsonTask>> CustomJsonTask::Load(const std::string& path) {
  auto task = std::make_unique<CustomJsonTask>();
  task->path_ = path;
  absl::Status s = ForEachJsonlLine(path, [&](const std::string& line, const std::string& where) {
    absl::StatusOr<Conversation> conv = ParseConversationJson(line, where);
    if (!conv.ok()) return conv.status();
    if (conv->messages.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": a conversation needs at least 2 messages"));
    }
    task->conversations_.push_back(*std::move(conv));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return task;
}

absl::StatusOr<Example> CustomJsonTask::GetExample(int64_t index) const {
  if (index < 0 || index >= num_examples()) {
    return absl::OutOfRangeError(absl::StrCat(name(), ": example ", index, " of ", num_examples()));
  }
  Example ex;
  ex.conversation = conversations_[index];
  const Message& last = ex.conversation.messages.back();
  ex.answer = last.content;
  return ex;
}

}  // namespace gpt_sft::data
