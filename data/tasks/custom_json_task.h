// nanochat's CustomJSON task: a JSONL file, one conversation (a JSON array of
// {"role", "content"} messages) per line, for data such as identity conversations.
#ifndef GPT_SFT_DATA_TASKS_CUSTOM_JSON_TASK_H_
#define GPT_SFT_DATA_TASKS_CUSTOM_JSON_TASK_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/tasks/task.h"

namespace gpt_sft::data {

class CustomJsonTask : public Task {
 public:
  /// Reads and checks every line now, with nanochat's rules: blank lines are skipped;
  /// every other line is one conversation of at least 2 messages, roles alternating user,
  /// assistant, ... from user, every content a string (no system message, no parts).
  /// Errors name the file and line: "chats.jsonl:12: malformed JSON: ...".
  ///
  /// Unlike nanochat, which prints a warning and yields no rows, a missing file is an
  /// error (NotFound): a silently empty task would hide a mistyped path in a mixture.
  static absl::StatusOr<std::unique_ptr<CustomJsonTask>> Load(const std::string& path);

  std::string name() const override { return "CustomJSON(" + path_ + ")"; }
  /// nanochat gives CustomJSON no evaluation; Evaluate is the default exact match against
  /// the last assistant message's text (kept in Example::answer).
  EvalType eval_type() const override { return EvalType::kGenerative; }
  int64_t num_examples() const override { return static_cast<int64_t>(conversations_.size()); }
  absl::StatusOr<Example> GetExample(int64_t index) const override;

 private:
  explicit CustomJsonTask(std::string path) : path_(std::move(path)) {}

  std::string path_;
  std::vector<Conversation> conversations_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_CUSTOM_JSON_TASK_H_
