// The user's own conversations: a JSONL file, one conversation (a JSON array of
// {"role", "content"} messages) per line. nanochat's CustomJSON task, widened to everything
// nanochat's render_conversation accepts: a leading system message (merged into the first
// user message when rendered) and assistant content given as a list of parts.
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
  /// Reads and checks every line now. Blank lines are skipped; every other line is one
  /// conversation: an optional system message, then at least a user and an assistant
  /// message, roles alternating user, assistant, ...; system and user content a string,
  /// assistant content a string or a list of {"type": "text"|"python"|"python_output",
  /// "text": ...} parts (conversation_json.h). nanochat's CustomJSON took strings only and
  /// no system message; its render_conversation takes both, and so do we.
  /// Errors name the file and line: "chats.jsonl:12: malformed JSON: ...".
  ///
  /// Unlike nanochat, which prints a warning and yields no rows, a missing file is an
  /// error (NotFound): a silently empty task would hide a mistyped path in a mixture.
  static absl::StatusOr<std::unique_ptr<CustomJsonTask>> Load(const std::string& path);

  std::string name() const override { return "CustomJSON(" + path_ + ")"; }
  /// nanochat gives CustomJSON no evaluation; Evaluate is the default exact match against
  /// the last assistant message's text (its text parts joined, kept in Example::answer).
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
